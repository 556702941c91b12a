"""Fixtures shared by the view tests (the throw-away Hugging Face cache)."""

from tests.views.models_fixtures import model_hub  # noqa: F401  (a fixture)
