"""The packaging files agree with each other and with pyproject.toml (no build, no Qt).

One app id names the desktop file, the AppStream metainfo, its launchable, the icon and
every PNG; the desktop entry, the metainfo and the PyInstaller spec all run the same
`mha-gui` program that pyproject.toml installs; every PNG has the size its folder says.
The two freedesktop validators run when they are installed (Debian: appstream,
desktop-file-utils) and are skipped otherwise; `make bundle` does not need them.
"""

from __future__ import annotations

import configparser
import re
import shutil
import struct
import subprocess
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGING = ROOT / "packaging"
APP_ID = "io.github.mha_gui"
DESKTOP = PACKAGING / f"{APP_ID}.desktop"
METAINFO = PACKAGING / f"{APP_ID}.metainfo.xml"
SPEC = PACKAGING / "mha-gui.spec"
SIZES = (16, 32, 48, 64, 128, 256)


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def desktop_entry() -> configparser.SectionProxy:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    parser.read_string(DESKTOP.read_text(encoding="utf-8"))
    return parser["Desktop Entry"]


def metainfo() -> ET.Element:
    return ET.parse(METAINFO).getroot()


def program_name() -> str:
    (name,) = pyproject()["project"]["scripts"]
    return name


def test_only_the_id_named_desktop_and_metainfo_files_exist():
    assert sorted(p.name for p in PACKAGING.glob("*.desktop")) == [DESKTOP.name]
    assert sorted(p.name for p in PACKAGING.glob("*.xml")) == [METAINFO.name]


def test_desktop_entry_runs_the_installed_program_with_the_app_icon():
    entry = desktop_entry()
    assert entry["Type"] == "Application"
    exec_words = entry["Exec"].split()
    assert exec_words[0] == program_name() == "mha-gui"
    assert exec_words[1:] == ["%f"]  # a session file from the file manager, or nothing
    assert entry["TryExec"] == program_name()
    assert entry["Icon"] == APP_ID
    assert entry["Terminal"] == "false"
    assert "Education" in entry["Categories"].split(";")


def test_metainfo_names_the_same_app_program_licence_and_version():
    root = metainfo()
    assert root.tag == "component" and root.get("type") == "desktop-application"
    assert root.findtext("id") == APP_ID
    launchable = root.find("launchable")
    assert launchable.get("type") == "desktop-id" and launchable.text == DESKTOP.name
    assert root.findtext("provides/binary") == program_name()
    assert root.findtext("name") == desktop_entry()["Name"]
    assert root.findtext("project_license") == pyproject()["project"]["license"]
    releases = [r.get("version") for r in root.findall("releases/release")]
    assert releases and releases[0] == pyproject()["project"]["version"]
    assert root.find("content_rating").get("type") == "oars-1.1"
    categories = {c.text for c in root.findall("categories/category")}
    assert categories <= set(desktop_entry()["Categories"].strip(";").split(";"))


def test_spec_builds_the_program_the_desktop_entry_runs():
    spec = SPEC.read_text(encoding="utf-8")
    assert re.search(r'^APP = "([^"]+)"$', spec, re.M).group(1) == program_name()
    assert "name=APP" in spec
    assert 'collect_submodules("mha_gui")' in spec  # lazily imported modules are bundled
    assert '"mha_gui/resources"' in spec  # the icon where importlib.resources looks
    assert (ROOT / "mha_gui" / "__main__.py").is_file()  # the spec's entry script
    hook = PACKAGING / "hooks" / "pre_find_module_path" / "hook-mha_gui.resources.py"
    assert hook.is_file()
    # The bundle extra and the build/smoke-test commands the Makefile runs.
    extras = pyproject()["project"]["optional-dependencies"]
    assert any(req.lower().startswith("pyinstaller>=") for req in extras["bundle"])
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "packaging/mha-gui.spec" in makefile and "packaging/smoke_test.sh" in makefile
    assert f"APP_ID       := {APP_ID}" in makefile


def png_size(path: Path) -> tuple[int, int, int]:
    """(width, height, colour type) from a PNG's IHDR chunk."""
    data = path.read_bytes()[:26]
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", path
    width, height = struct.unpack(">II", data[16:24])
    return width, height, data[25]


def test_every_png_icon_has_its_stated_size():
    icons = PACKAGING / "icons" / "hicolor"
    found = sorted(p.relative_to(icons).as_posix() for p in icons.rglob("*.png"))
    assert found == sorted(f"{n}x{n}/apps/{APP_ID}.png" for n in SIZES)
    for n in SIZES:
        width, height, colour_type = png_size(icons / f"{n}x{n}" / "apps" / f"{APP_ID}.png")
        assert (width, height) == (n, n)
        assert colour_type == 6  # RGBA: transparent corners
    render = (PACKAGING / "render_icons.py").read_text(encoding="utf-8")
    assert f'APP_ID = "{APP_ID}"' in render and f"SIZES = {SIZES}" in render


def test_smoke_test_script_parses():
    subprocess.run(["bash", "-n", str(PACKAGING / "smoke_test.sh")], check=True)


@pytest.mark.skipif(shutil.which("appstreamcli") is None, reason="appstreamcli not installed")
def test_metainfo_is_valid_appstream():
    result = subprocess.run(
        ["appstreamcli", "validate", "--no-net", str(METAINFO)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(
    shutil.which("desktop-file-validate") is None, reason="desktop-file-validate not installed"
)
def test_desktop_file_is_valid():
    result = subprocess.run(["desktop-file-validate", str(DESKTOP)], capture_output=True, text=True)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_every_python_package_folder_is_installed():
    """pyproject.toml lists its packages by name: a new feature folder that is not listed
    would work from the checkout and be missing from `pip install .` and the bundle."""
    listed = set(pyproject()["tool"]["setuptools"]["packages"])
    folders = {
        ".".join(init.parent.relative_to(ROOT).parts)
        for init in (ROOT / "mha_gui").rglob("__init__.py")
    }
    assert folders - listed == set()
    assert listed - folders == {"mha_gui.resources"}
