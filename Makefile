# Two commands do all the set-up on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# make test runs a test file per worker, one worker per core (module fixtures stay whole)
TEST_WORKERS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: run test bench lint format clean bundle icons install-launcher uninstall-launcher

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(VENV)/bin/mha-gui --preset toy

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile

bench: $(STAMP)
	$(PY) benchmarks/bench_forward.py
	$(PY) benchmarks/bench_gui.py

# --- standalone bundle (PyInstaller) and desktop launcher: see README, "Install" ---------
BUNDLE_STAMP := $(VENV)/.installed-bundle
DIST         := dist/mha-gui
APP_ID       := io.github.mha_gui
DATA_HOME    ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)

$(BUNDLE_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[bundle]'
	touch $(BUNDLE_STAMP)

# Builds dist/mha-gui/ (runs without Python), then smoke-tests what was built.
bundle: $(BUNDLE_STAMP)
	@command -v objdump >/dev/null || { echo "make bundle: PyInstaller needs objdump, from binutils (Debian/Ubuntu: sudo apt-get install binutils)" >&2; exit 1; }
	rm -rf build/pyinstaller $(DIST)
	$(VENV)/bin/pyinstaller --noconfirm --log-level WARN --distpath dist --workpath build/pyinstaller packaging/mha-gui.spec
	MHA_SMOKE_HIDE="$$($(PY) -c 'import sysconfig as s; print(s.get_paths()["stdlib"], s.get_paths()["platlib"])')" bash packaging/smoke_test.sh $(DIST)/mha-gui

# Re-renders the committed PNG icons from resources/mha-gui.svg.
icons: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) packaging/render_icons.py

# The menu entry, icons and AppStream data for the current user (mha-gui must be on PATH:
# pip install ., or a link to the bundle, see README).
install-launcher:
	install -Dm644 packaging/$(APP_ID).desktop $(DATA_HOME)/applications/$(APP_ID).desktop
	install -Dm644 packaging/$(APP_ID).metainfo.xml $(DATA_HOME)/metainfo/$(APP_ID).metainfo.xml
	install -Dm644 resources/mha-gui.svg $(DATA_HOME)/icons/hicolor/scalable/apps/$(APP_ID).svg
	for png in packaging/icons/hicolor/*/apps/$(APP_ID).png; do \
		install -Dm644 $$png $(DATA_HOME)/icons/$${png#packaging/icons/} || exit 1; \
	done
	if command -v update-desktop-database >/dev/null; then update-desktop-database -q $(DATA_HOME)/applications; fi
	touch $(DATA_HOME)/icons/hicolor  # icon themes rescan a folder that changed
	@command -v mha-gui >/dev/null || echo "install-launcher: note: mha-gui is not on PATH yet (see README, Install)"

uninstall-launcher:
	rm -f $(DATA_HOME)/applications/$(APP_ID).desktop $(DATA_HOME)/metainfo/$(APP_ID).metainfo.xml
	rm -f $(DATA_HOME)/icons/hicolor/*/apps/$(APP_ID).png $(DATA_HOME)/icons/hicolor/scalable/apps/$(APP_ID).svg

lint: $(STAMP)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean:
	rm -rf $(VENV) build dist *.egg-info
