# scripts/house.py, the size gate `make test` runs first: it finds a file
# over 800 lines and a function over 120, names them, and passes what is
# within (including the project as it stands, which make test checks too).
import os
import subprocess

from conftest import REPO

HOUSE = os.path.join(REPO, "scripts", "house.py")
PYTHON = "/usr/bin/python3"


def house(*paths):
    p = subprocess.run([PYTHON, HOUSE, *paths], capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout


def function(name, body_lines, params_on_two_lines=False):
    sig = (f"static int {name}(int a,\n               int b)" if params_on_two_lines else f"int {name}(void)")
    return sig + "\n{\n" + "".join(f"    x += {i};\n" for i in range(body_lines)) + "    return 0;\n}\n"


def test_a_function_over_120_lines_is_named_with_its_line(tmp_path):
    src = tmp_path / "m.c"
    # 116 statements + return + braces + a signature on two lines = 121 lines
    src.write_text("/* m */\n#include <x.h>\n\n" + function("small", 3) + "\n" + function("big", 116, True))
    rc, out = house(str(src))
    assert rc == 1
    assert f"{src}:12: big() is 121 lines, over 120" in out, out
    assert "small" not in out


def test_a_function_of_120_lines_and_a_file_of_800_pass(tmp_path):
    src = tmp_path / "ok.c"
    text = function("edge", 115, True) + "\n"  # 120 lines
    text += "int pad;\n" * (800 - text.count("\n"))
    src.write_text(text)
    assert text.count("\n") == 800
    assert house(str(src)) == (0, "")


def test_a_file_over_800_lines_is_named(tmp_path):
    src = tmp_path / "long.h"
    src.write_text("int pad;\n" * 801)
    rc, out = house(str(src))
    assert rc == 1 and f"{src}: 801 lines, over 800" in out, out
