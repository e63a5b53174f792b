"""The boards: the one list of them is CMakePresets.json's configure presets that set EMCP_BOARD,
in the file's order (a preset per board, named as the board). docs/footprint.md has a section
per board in that order, scripts/footprint builds them (`footprint.py boards`), and
tests/readme/check_boards.py holds every other place that names the boards to this list."""
import json
import os

from .elf import ROOT


def board_list(root=ROOT):
    """The boards of CMakePresets.json, in its order."""
    with open(os.path.join(root, "CMakePresets.json"), encoding="utf-8") as fh:
        presets = json.load(fh)
    return [p["cacheVariables"]["EMCP_BOARD"] for p in presets.get("configurePresets", [])
            if (p.get("cacheVariables") or {}).get("EMCP_BOARD")]
