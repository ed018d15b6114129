#!/usr/bin/env python3
"""The regress HTML report in headless Chromium (Debian's chromium): a run of two cases of
the faults suite (one passes, one crashes) writes report.html; Chromium loads it with no
console message at all (errors, warnings, logs: the page has no script), its DOM has one
table row per case, failures first, and its screenshot shows the red status cell of the
failure above the green one of the pass. The console check is itself checked: the same
page with a planted script error must be caught.

    html_report.py --zesim ./zesim --build build [--keep DIR]   (DIR/report.png to look at)

Exit 77 (CTest skip) when chromium is not installed or cannot start here, with the reason."""
import argparse
import pathlib
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def chromium():
    for c in ("chromium", "chromium-browser"):
        p = shutil.which(c)
        if p:
            return p
    return None


def load(browser, page, tmp, what):
    """Chromium's console lines, its DOM and a screenshot (PNG bytes) of file://page."""
    png = tmp / f"{what}.png"
    base = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=1400,900",
            f"--user-data-dir={tmp / ('profile-' + what)}", "--enable-logging=stderr", "--v=0"]
    r = subprocess.run(base + [f"--screenshot={png}", page.as_uri()], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=120)
    console = [ln for ln in r.stdout.splitlines() if ":CONSOLE" in ln]
    if r.returncode != 0 or not png.exists():
        raise RuntimeError(f"chromium failed (exit {r.returncode}):\n{r.stdout[-3000:]}")
    d = subprocess.run(base + ["--dump-dom", page.as_uri()], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    console += [ln for ln in d.stderr.splitlines() if ":CONSOLE" in ln]
    return console, d.stdout, png.read_bytes()


def png_pixels(data):
    """(width, height, rows of RGB(A) tuples) of an 8-bit RGB/RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), f"PNG depth {depth} colour type {ctype}"
            bpp = 3 if ctype == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def rows_with(pixels, rgb):
    """The pixel rows of the screenshot that hold the colour `rgb` somewhere."""
    w, h, bpp, rows = pixels
    needle = bytes(rgb)
    return [y for y, row in enumerate(rows) if any(row[x:x + 3] == needle for x in range(0, w * bpp, bpp))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--keep", help="keep the report and the screenshot in this folder")
    a = ap.parse_args()
    browser = chromium()
    if not browser:
        print("SKIP: chromium is not installed (apt-get install chromium; ./zesim setup does)")
        return 77
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="zesim-html."))
    try:
        out = tmp / "run"
        r = subprocess.run([a.zesim, "regress", "faults", "--filter", "^(ok|crash)$", "--jobs", "2", "--out", str(out)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300,
                           env={"ZESIM_BUILD": a.build, "PATH": "/usr/bin:/bin"})
        page = out / "report.html"
        if not page.exists():
            print(f"FAIL: no report ({r.stderr})")
            return 1
        # The checker first: a planted script error and console message must be seen.
        bad = tmp / "planted.html"
        bad.write_text(page.read_text().replace("</body>", "<script>console.warn('planted'); nosuch();</script></body>"))
        try:
            console, _, _ = load(browser, bad, tmp, "planted")
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"SKIP: chromium cannot run here: {e}")
            return 77
        if not any("planted" in c for c in console) or not any("nosuch" in c for c in console):
            print(f"FAIL: the console check missed a planted error: {console}")
            return 1
        console, dom, png = load(browser, page, tmp, "report")
        problems = []
        if console:
            problems.append("console messages:\n  " + "\n  ".join(console))
        statuses = re.findall(r'<tr><td class="([a-z-]+)">', dom)
        if statuses != ["crash", "pass"]:
            problems.append(f"table rows in the DOM: {statuses}, expected crash then pass")
        pix = png_pixels(png)
        # The counts line above the table uses the same colours: the table's cells are the
        # last rows of each colour, the failure's (#fdd) above the pass's (#dfd).
        red, green = rows_with(pix, (0xff, 0xdd, 0xdd)), rows_with(pix, (0xdd, 0xff, 0xdd))
        red_end, green_end = (red or [None])[-1], (green or [None])[-1]
        if red_end is None or green_end is None or not red_end < green_end or red_end - red[0] < 40:
            problems.append(f"screenshot: failure cell (#fdd) ends at row {red_end}, pass cell (#dfd) at row "
                            f"{green_end}: expected both, the failure's (with its log links) above")
        print(f"screenshot {pix[0]}x{pix[1]}, failure rows end at y={red_end}, pass rows at y={green_end}; "
              f"{len(console)} console messages")
        if a.keep:
            keep = pathlib.Path(a.keep)
            keep.mkdir(parents=True, exist_ok=True)
            shutil.copy(page, keep / "report.html")
            (keep / "report.png").write_bytes(png)
        if problems:
            print("FAIL: " + "\n".join(problems))
            return 1
        print("PASS: the report opens in headless Chromium without console messages")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
