"""The one entry point for every export, shared by `mha-gui export` and the window.

    export_to(session, "scores.svg", stage="scores", head=None, query=2)

PATH's suffix picks the output. Every argument is checked before anything is written,
and every file goes through `engine.session.atomic_write` (a temporary file in the
target folder, renamed at the end): a failed export leaves no file behind and never
replaces an existing file with a partial one. Every problem is a one-line ValueError.
"""

from __future__ import annotations

import numbers
from pathlib import Path

from mha_gui import theme
from mha_gui.engine.layer.session import (
    Session,
    atomic_write,
    save_npz,
    save_session,
    writable_target,
)
from mha_gui.engine.panels.stage_panels import check_weights_range
from mha_gui.engine.panels.stages import Stage, stage_by_name
from mha_gui.export.drawing import FigureOptions
from mha_gui.theme import check_colormap

FIGURE_SUFFIXES = (".png", ".svg", ".pdf")
SUFFIXES = (".png", ".svg", ".pdf", ".gif", ".tex", ".npz", ".json")
WIDTH_RANGE = (200, 10_000)
# Seven RGB frames plus their quantised copies: 3000 px already takes ~0.8 GB of memory,
# 10000 px would take ~8 GB for a GIF no slide needs.
GIF_WIDTH_RANGE = (200, 3_000)
DECIMALS_RANGE = (0, 10)
FRAME_MS_RANGE = (20, 60_000)


def _whole(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a whole number from {lo} to {hi}, got {value!r}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be from {lo} to {hi}, got {value}")
    return int(value)


def check_options(
    session: Session,
    path,
    *,
    stage="input",
    head=None,
    query=None,
    width=None,
    theme_name="light",
    frame_ms=1200,
    decimals=2,
    handout=False,
) -> tuple[Path, str, Stage]:
    """Validate everything export_to needs; returns (path, suffix, stage)."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in SUFFIXES:
        what = f"unknown suffix {target.suffix!r} in" if target.suffix else "no suffix in"
        raise ValueError(f"{what} {target.name!r}; use one of: {', '.join(SUFFIXES)}")
    writable_target(target)
    s = stage if isinstance(stage, Stage) else stage_by_name(str(stage))
    c = session.config
    if head is not None:
        _whole("head", head, 0, c.h - 1)
    if query is not None:
        _whole("query", query, 0, c.n - 1)
    if width is not None:
        _whole("width", width, *(GIF_WIDTH_RANGE if suffix == ".gif" else WIDTH_RANGE))
    theme.palette(theme_name)
    _whole("frame_ms", frame_ms, *FRAME_MS_RANGE)
    _whole("decimals", decimals, *DECIMALS_RANGE)
    if handout and suffix != ".pdf":
        raise ValueError(f"a handout is a PDF: use a .pdf file name, not {suffix!r}")
    if handout and theme_name != "light":
        raise ValueError(
            f"the handout is made for printing and is light only: drop theme {theme_name!r}"
        )
    return target, suffix, s


def export_to(
    session: Session,
    path,
    *,
    stage="input",
    head: int | None = None,
    query: int | None = None,
    width: int | None = None,
    theme: str = "light",
    frame_ms: int = 1200,
    decimals: int = 2,
    handout: bool = False,
    colormap: str = theme.DEFAULT_COLORMAP,
    view: str = "stage",
    key: int | None = None,
    weights_range: str = "fixed",
    against: Session | None = None,
    extra: dict | None = None,
) -> Path:
    """Write `path` (.png .svg .pdf .gif .tex .npz .json) and return it.

    .png/.svg/.pdf: the figure of `stage` (.pdf with handout=True: the 7-page handout);
    .gif: every stage, `frame_ms` per frame; .tex: the stage's equation and matrices with
    `decimals` places; .npz: every array; .json: the session.
    `colormap` (a key of `theme.COLORMAP_CHOICES`) colours every image: the
    .png/.svg/.pdf figure, the .gif frames and the handout's figures. `theme` ('light' or
    'dark') applies to figures and the GIF; the handout is for printing and always light,
    so theme='dark' with handout=True is refused (ValueError) rather than ignored.
    `head=I` shows only head I; `query=J` outlines query row J. `width` is the PNG/GIF
    width in pixels (default 1600 for PNG, 1200 for GIF) or the SVG's nominal width.
    `view` other than "stage" writes that figure (export/figures/registry.py;
    .png/.svg/.pdf only) with `key`, `against` and the stage/head/query;
    `weights_range` ("fixed", "head", "row") is what the weights' colours show.
    `extra` goes to the view's FigureOptions.extra (e.g. the model view's folder and text).
    """
    target, suffix, s = check_options(
        session,
        path,
        stage=stage,
        head=head,
        query=query,
        width=width,
        theme_name=theme,
        frame_ms=frame_ms,
        decimals=decimals,
        handout=handout,
    )
    check_colormap(colormap)  # (`theme` is the theme name here)
    check_weights_range(weights_range)
    if view != "stage":
        return _export_view(
            session,
            target,
            view,
            FigureOptions(
                s.index,
                head or 0,
                query or 0,
                key,
                weights_range,
                against,
                {"head": head, **(extra or {})},
            ),
            width=width,
            theme_name=theme,
            colormap=colormap,
        )
    if suffix == ".json":
        return save_session(session, target)
    if suffix == ".npz":
        return save_npz(session, target)
    if suffix == ".tex":
        from mha_gui.export.latex import stage_document

        text = stage_document(session, s, head=head, decimals=decimals)
        return atomic_write(target, lambda tmp: tmp.write_text(text, encoding="utf-8"))

    from mha_gui.export import figure

    figure.ensure_app()
    kw = dict(head=head, query=query, colormap=colormap, weights_range=weights_range)
    if suffix == ".gif":
        from mha_gui.export.animation import write_gif

        return atomic_write(
            target,
            lambda tmp: write_gif(
                tmp, session, width=width, frame_ms=frame_ms, theme_name=theme, **kw
            ),
        )
    if suffix == ".pdf" and handout:
        from mha_gui.export.handout import write_handout

        return atomic_write(
            target, lambda tmp: write_handout(tmp, session, decimals=decimals, **kw)
        )
    writer = {".png": figure.write_png, ".svg": figure.write_svg, ".pdf": figure.write_pdf}[suffix]
    trace = session.run()
    return atomic_write(
        target,
        lambda tmp: _checked(
            writer, tmp, session, s, width=width, trace=trace, theme_name=theme, **kw
        ),
    )


def _export_view(session, target: Path, view: str, options, **kw) -> Path:
    """A registered view's figure (the neuron view, token lines, …) as PNG/SVG/PDF."""
    from mha_gui.engine.panels.stage_panels import SessionData
    from mha_gui.export.drawing import FIGURE_SUFFIXES, WRITERS
    from mha_gui.export.figures.registry import draw_figure

    suffix = target.suffix.lower()
    if suffix not in FIGURE_SUFFIXES:
        raise ValueError(f"--view {view} writes a figure: use {', '.join(FIGURE_SUFFIXES)}")
    drawing = draw_figure(view, SessionData(session), options)
    return atomic_write(target, lambda tmp: _checked(WRITERS[suffix], tmp, drawing, **kw))


def _checked(writer, tmp: Path, *args, **kw) -> None:
    writer(tmp, *args, **kw)
    if not tmp.is_file() or tmp.stat().st_size == 0:
        raise OSError(f"the {tmp.suffix or 'figure'} writer produced no data")
