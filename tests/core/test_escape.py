from probeguard.reports.escape import md_inline


def test_markdown_metacharacters_are_escaped():
    hostile = "x | y <script>alert(1)</script> ![img](http://evil.example/a.png) `code` [link](u)"
    out = md_inline(hostile, max_len=None)
    assert "<script>" not in out and "](" not in out
    assert "\\|" in out and "\\<" in out and "\\`" in out and "\\!" in out


def test_newlines_cannot_forge_rows():
    out = md_inline("a\n| forged | row |\n", max_len=None)
    assert "\n" not in out and "\\| forged" in out


def test_truncation_happens_before_escaping():
    out = md_inline("|" * 500, max_len=10)
    assert out.endswith("…") and out.count("\\|") == 9
