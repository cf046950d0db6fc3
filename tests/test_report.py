"""HTML reports of compare, evaluate, counters and links: self-contained (no external
resources), with the inputs, candidate table, winner and plots; and they render in a real
browser (headless Chromium: the tables are in the DOM and every embedded image decodes)."""

import base64
import os
import re
import shutil
import subprocess

import pytest

from rankmap.cli import main
from rankmap.report import Report

CHROMIUM = next((p for p in (shutil.which("chromium"), shutil.which("chromium-browser"),
                             "/usr/bin/chromium") if p and os.path.exists(p)), None)


def run(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def images(html):
    return re.findall(r'<img src="data:image/(png|svg\+xml);base64,([A-Za-z0-9+/=]+)"', html)


def assert_self_contained(html):
    assert "<!DOCTYPE html>" in html and "</html>" in html
    # nothing is fetched: no src/href to another file or the network
    assert not re.search(r'(src|href)="(?!data:)', html)
    for kind, data in images(html):
        raw = base64.b64decode(data)
        assert raw.startswith(b"\x89PNG") if kind == "png" else b"<svg" in raw


def test_compare_report(tmp_path, capsys):
    out = tmp_path / "r.html"
    code, _o, err = run(capsys, "compare", "-m", "torus:4x4x2:cores=2", "-p", "fft2d:4x8",
                        "--mappings", "TXYZ,XYZT,inorder,random", "--report", out)
    assert code == 0, err
    html = out.read_text()
    assert_self_contained(html)
    assert 'id="candidates"' in html and html.count("<tr") >= 5
    assert "busiest link vs inorder" in html
    assert "The winner and why" in html and "best: " in html and "why: " in html
    # 2 phases: 2 CDFs + 2 link maps of the winner
    assert len(images(html)) == 4
    for name in ("TXYZ", "XYZT", "inorder", "random", "torus:4x4x2:cores=2", "fft2d:4x8"):
        assert name in html
    code, _o, err = run(capsys, "compare", "-m", "torus:4x4", "-p", "fft2d:4x4", "--report", out)
    assert code == 2 and "exists" in err
    # the same inputs, the same bytes: the footer held the time of the run
    again = tmp_path / "again.html"
    assert run(capsys, "compare", "-m", "torus:4x4x2:cores=2", "-p", "fft2d:4x8", "--mappings",
               "TXYZ,XYZT,inorder,random", "--report", again)[0] == 0
    assert again.read_bytes() == out.read_bytes()
    assert not re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d", html)


def test_evaluate_report_and_bad_name(tmp_path, capsys):
    out = tmp_path / "e.html"
    code, _o, err = run(capsys, "evaluate", "-m", "dragonfly:groups=4,rows=2,cols=2,nodes=2",
                        "-p", "stencil:4x4", "--mapping", "random", "--report", out)
    assert code == 0, err
    html = out.read_text()
    assert_self_contained(html)
    assert "the only candidate" in html and len(images(html)) == 2   # CDF + dragonfly map
    assert "busiest link vs" not in html            # a lone candidate: nothing to compare
    code, _o, err = run(capsys, "evaluate", "-m", "torus:4x4", "-p", "fft2d:4x4", "--mapping",
                        "TXY", "--report", tmp_path / "e.pdf")
    assert code == 2 and "expected a .html file name" in err


def test_links_report(tmp_path, capsys):
    links = tmp_path / "l.csv"
    assert run(capsys, "evaluate", "-m", "torus:4x4x4", "-p", "stencil:4x4x4", "--mapping",
               "ZYXT", "--links-out", links)[0] == 0
    code, _o, err = run(capsys, "links", links, "-m", "torus:4x4x4", "--report",
                        tmp_path / "l.html")
    assert code == 0, err
    html = (tmp_path / "l.html").read_text()
    assert_self_contained(html)
    assert 'id="hot-all"' in html and len(images(html)) == 1


def test_svg_plots_are_the_same_bytes_on_every_run(tmp_path, capsys):
    """An SVG held the time of the run (<dc:date>) and randomly salted clip-path ids."""
    links = tmp_path / "l.csv"
    assert run(capsys, "evaluate", "-m", "torus:4x4x4", "-p", "stencil:8x8", "--mapping",
               "inorder", "--links-out", links)[0] == 0
    for name in ("a.svg", "b.svg"):
        assert run(capsys, "links", links, "-m", "torus:4x4x4", "--plot", tmp_path / name)[0] == 0
    a, b = (tmp_path / "a.svg").read_bytes(), (tmp_path / "b.svg").read_bytes()
    assert a == b and b"clip-path" in a and b"dc:date" not in a


def test_report_escapes_text(tmp_path):
    rep = Report("a <b> & c")
    rep.table(["x"], [["<script>alert(1)</script>"]])
    html = rep.render()
    assert "<script>" not in html and "&lt;script&gt;" in html


# ---- a real browser -------------------------------------------------------------------------

_PROBE = """<script>window.addEventListener('load', function () {
  var imgs = document.images, ok = 0;
  for (var i = 0; i < imgs.length; i++) if (imgs[i].complete && imgs[i].naturalWidth > 0) ok++;
  var d = document.createElement('div'); d.id = 'probe';
  d.textContent = 'images ' + ok + '/' + imgs.length + ' tables ' +
    document.querySelectorAll('table tbody tr').length + ' width ' +
    Math.round(document.querySelector('table').getBoundingClientRect().width);
  document.body.appendChild(d);
});</script>"""


def chromium(*args, tmp):
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (Debian package 'chromium', see .ci/run): "
                    "the in-browser rendering check is skipped")
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
           "--no-first-run", "--disable-background-networking", "--disable-component-update",
           "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={tmp}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def counters_report(tmp_path_factory):
    d = tmp_path_factory.mktemp("browser")
    files = []
    for m in ("TXYZ", "XYZT", "ZYXT", "random"):
        f = d / f"{m}.csv"
        assert main(["evaluate", "-m", "torus:4x4x4:cores=2", "-p", "stencil:8x16",
                     "--mapping", m, "--links-out", str(f)]) == 0
        files.append(str(f))
    times = d / "t.csv"
    times.write_text("label,phase,seconds\nTXYZ,all,1\nXYZT,all,1.5\nZYXT,all,2\nrandom,all,4\n")
    report = d / "counters.html"
    assert main(["counters", *files, "--times", str(times), "--report", str(report)]) == 0
    return d, report


def test_report_renders_in_chromium(counters_report, capsys):
    d, report = counters_report
    capsys.readouterr()
    html = report.read_text()
    n_img = len(images(html))
    assert n_img == 3
    probe = d / "probe.html"
    probe.write_text(html.replace("</body>", _PROBE + "</body>"))
    res = chromium("--dump-dom", probe.as_uri(), tmp=str(d / "profile"))
    assert res.returncode == 0, res.stderr[-2000:]
    dom = res.stdout
    assert '<table id="candidates">' in dom and '<table id="correlation">' in dom
    m = re.search(r'<div id="probe">images (\d+)/(\d+) tables (\d+) width (\d+)</div>', dom)
    assert m, dom[-2000:]
    ok, total, rows, width = map(int, m.groups())
    assert ok == total == n_img          # every embedded image decoded in the browser
    assert rows >= 4 + 2 and width > 300  # the candidate and correlation rows are laid out


def test_report_screenshot(counters_report):
    d, report = counters_report
    shot = d / "shot.png"
    res = chromium(f"--screenshot={shot}", "--window-size=1100,1800", report.as_uri(),
                   tmp=str(d / "profile2"))
    assert res.returncode == 0, res.stderr[-2000:]
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG") and len(data) > 20000


def test_json_outputs_record_the_plateau_fraction_and_the_seed(capsys):
    """plateau_bytes at --y 0.5 looked the same as at 0.99: the JSON says which."""
    import json
    for cmd in (["compare", "--mappings", "TXY,XYT"], ["evaluate", "--mapping", "random"]):
        code, out, _err = run(capsys, cmd[0], "-m", "torus:4x4", "-p", "stencil:4x4", *cmd[1:],
                              "--y", "0.5", "--seed", "3", "--format", "json")
        assert code == 0
        assert json.loads(out)["settings"] == {"plateau_y": 0.5, "seed": 3}
