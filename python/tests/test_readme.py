"""The README's Python example runs, and says what its comments say."""

import os
import re

import pytest

README = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "README.md")


def test_readme_example(capsys):
    if not os.path.exists(README):
        pytest.skip("not in the repository (an installed package's tests)")
    with open(README, encoding="utf-8") as handle:
        text = handle.read()
    section = text.split("## Using spart from Python", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "README.md (Using spart from Python)", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "[2. 2. 2. 2. 2.]"
    iterations, success, first, last = lines[1].split()
    assert (iterations, success) == ("25", "True")
    assert round(float(first), 1) == 47.7 and round(float(last), 2) == 0.30
