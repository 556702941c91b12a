"""The lesson player dock (`lessonPanel`), its pointer overlay and Help ▸ Lessons…."""
