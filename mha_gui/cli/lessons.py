"""`mha-gui lessons`, `mha-gui lesson FILE|NAME --check | --handout OUT.pdf` and
`mha-gui --lesson FILE|NAME` (the window opened on a lesson).

    mha-gui lessons                          the built-in lessons, one line each
    mha-gui lesson walkthrough --check       ok: … or one line naming file, step, field
    mha-gui lesson my.toml --handout my.pdf  each step's text with its figure

A lesson that cannot be played is one line `mha-gui: error: FILE: step 3 (“Scores”):
field 'stage': …`, exit status 2, and no file. `mha_gui.cli` registers these
subcommands (`add_lesson_parsers`, `LESSON_COMMANDS`) and calls `open_on_lesson` for
`--lesson`.
"""

from __future__ import annotations

from mha_gui.cli.arguments import out_file


def add_lesson_parsers(sub) -> None:
    """Add `lessons` and `lesson` to the subparsers `sub`."""
    sub.add_parser("lessons", help="list the built-in lessons, one line each")
    le = sub.add_parser("lesson", help="check a lesson file, or write it as a PDF handout")
    le.add_argument("lesson", metavar="FILE|NAME", help="a lesson file (.toml) or a built-in name")
    what = le.add_mutually_exclusive_group(required=True)
    what.add_argument("--check", action="store_true", help="validate the lesson and say ok")
    what.add_argument("--handout", metavar="OUT.pdf", help="write the lesson as a PDF handout")


def cmd_lessons(_args) -> int:
    from mha_gui.engine.lessons import builtin_lessons

    entries = builtin_lessons()
    width = max((len(e.name) for e in entries), default=0)
    for e in entries:
        print(f"{e.name:<{width}}  {e.steps:>2} steps  {e.title}")
    return 0


def checked_lesson(name_or_path):
    """The lesson and its step states, every problem raised as one LessonError."""
    from mha_gui.engine.lessons import check_lesson, load_lesson

    lesson = load_lesson(name_or_path)
    return lesson, check_lesson(lesson)


def cmd_lesson(args) -> int:
    if args.handout is not None:
        out = out_file("--handout", args.handout, ".pdf")
    lesson, states = checked_lesson(args.lesson)
    if args.check:
        tasks = sum(1 for s in lesson.steps if s.do is not None)
        sources = sorted({_source_text(s.step.show.source) for s in states if s.step.show.source})
        print(
            f"ok: {lesson.file}: “{lesson.title}”, {len(lesson.steps)} steps, "
            f"{tasks} tasks; every step checked against {', '.join(sources)}"
        )
        return 0
    from mha_gui.export.lesson_handout import write_lesson_handout

    pages = write_lesson_handout(out, lesson, states)
    print(f"wrote {out}: {pages} pages, one per step of “{lesson.title}”")
    return 0


def _source_text(source) -> str:
    if source.kind == "model":
        return f"model {source.name} (layer {source.layer})"
    return f"{source.kind} {source.name}"


def open_on_lesson(name_or_path, run_app, check_display) -> int:
    """`mha-gui --lesson FILE|NAME`: check the lesson (one line and exit 2 when it
    cannot be played), then open the window on its first step's numbers with the
    lesson player started."""
    lesson, states = checked_lesson(name_or_path)
    check_display()
    from mha_gui.views.docks.lesson.lesson_panel import start_when_shown

    start_when_shown(lesson)
    first = states[0].step.show.source
    if first.kind == "preset":
        return run_app(preset=first.name)
    return run_app(session=states[0].session)


LESSON_COMMANDS = {"lessons": cmd_lessons, "lesson": cmd_lesson}
