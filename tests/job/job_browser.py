# SPDX-License-Identifier: MIT
"""The job report's HTML page (its merged timeline) driven in headless
Chromium through playwright (tests/job/job_browser.sh runs it).

  job_browser.py --browser CHROMIUM --page PAGE --truth TRUTH [--shot PNG]
  job_browser.py --browser CHROMIUM --bench PAGE...

Test mode, on the page of job_gen's job (TRUTH: its exact figures): every
track is there with its exact start; the tracks in view are drawn (their
pixels); hovering a rank's peak shows its exact bytes, at the whole job's
view and zoomed; the wheel zooms around the pointer (not over the names),
a drag pans, a double-click shows the whole job again; hovering the OOM
marker shows the request; scrolling draws the last tracks. Bench mode
prints each page's size, its load time (navigation start to the end of the
timeline's script, median of 3) and the redraw times.
"""
import argparse
import os
import re
import statistics
import sys

from playwright.sync_api import sync_playwright

fails = 0


def check(what, ok, detail=""):
    global fails
    print(("ok: " if ok else "FAIL: ") + what + ("" if ok else " " + str(detail)))
    if not ok:
        fails += 1


def load(browser, path):
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: errors.append("request " + r.url) if not r.url.startswith("file:") else None)
    page.goto("file://" + os.path.abspath(path))
    page.wait_for_function("document.body.dataset.tlmReady === '1'", timeout=120000)
    return page, errors


def canvas_box(page):
    return page.evaluate("""(() => { const b = document.getElementById('jt-canvas').getBoundingClientRect();
        return [b.left, b.top]; })()""")


def readout(page):
    return page.evaluate("document.getElementById('jt-readout').textContent")


def human(b):
    u, i, v = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"], 0, float(b)
    while v >= 1023.95 and i < len(u) - 1:
        v /= 1024
        i += 1
    return "%.1f %s" % (v, u[i]) if i else "%d B" % b


def hover_peak(page, k, peak, label):
    """Moves the pointer onto track k's highest point; the read-out must give its exact bytes."""
    top = page.evaluate(f"window.tlmJob.show({k})")
    t = page.evaluate(f"""(() => {{ const tr = window.tlmJob.tracks[{k}]; let b = 0;
        for (let i = 1; i < tr.r.length; i++) if (tr.r[i] > tr.r[b]) b = i; return tr.t[b]; }})()""")
    x = page.evaluate(f"window.tlmJob.x({t})")
    left, ctop = canvas_box(page)
    page.mouse.move(left + x, ctop + top + 20)
    got = readout(page)
    want = "reserved %s (%d bytes)" % (human(peak), peak)
    check(f"{label}: hovering track {k}'s peak reads '{want}'", want in got, repr(got))
    return left + x, ctop + top + 20


def test(browser, path, truth, shot):
    t = {}
    for line in open(truth):
        w = line.split()
        t[int(w[1])] = (int(w[3]), int(w[5]), int(w[7]))
    page, errors = load(browser, path)
    n = len(t)
    check("the page's script ran: every track", page.evaluate("document.body.dataset.tlmTracks") == str(n))
    starts = page.evaluate("window.tlmJob.tracks.map(tr => [tr.name, tr.start])")
    check("each track's start is its process's start on the job clock",
          [s[1] for s in starts] == [t[r][1] for r in range(n)], starts[:3])
    check("tracks in rank order, named by rank and host",
          [s[0] for s in starts] == ["rank %d (node%02d)" % (r, r // 8) for r in range(n)], starts[:3])
    drawn = page.evaluate("window.tlmJob.drawn()")
    check("the tracks in view are drawn (not all %d)" % n, 10 <= drawn < n, drawn)
    # pixels: the reserved line (#0969da, blended when thin) in each drawn track's row
    rows = page.evaluate(f"""(() => {{ const c = document.getElementById('jt-canvas'), x = c.getContext('2d');
        const d = window.devicePixelRatio || 1, J = window.tlmJob, out = [];
        for (let k = 0; k < {drawn}; k++) {{
          const top = J.rowTop(k); if (top + J.rowHeight > c.height / d) break;
          const img = x.getImageData(J.labelWidth * d, top * d, c.width - J.labelWidth * d, J.rowHeight * d).data;
          let blue = 0;
          for (let i = 0; i < img.length; i += 4) if (img[i + 2] - img[i] > 60) blue++;
          out.push(blue);
        }}
        return out; }})()""")
    check("every track in view has its reserved line drawn", rows and min(rows) > 20, rows)
    # the exact peak under the pointer, at the whole job's view (rank n-2: no OOM marker near it)
    k = n - 2
    px, py = hover_peak(page, k, t[k][0], "whole job")
    # zoom: three wheel notches around the pointer narrow the view by 1.25^3
    v = page.evaluate("window.tlmJob.view()")
    for _ in range(3):
        page.mouse.wheel(0, -100)
    w = page.evaluate("window.tlmJob.view()")
    ratio = (v[1] - v[0]) / (w[1] - w[0])
    check("three wheel notches zoom in by 1.25^3", abs(ratio - 1.25 ** 3) < 1e-6, (v, w, ratio))
    hover_peak(page, k, t[k][0], "zoomed")
    # over the names the wheel scrolls the tracks and does not zoom
    left, ctop = canvas_box(page)
    before = page.evaluate("window.tlmJob.view()")
    page.mouse.move(left + 40, ctop + 200)
    page.mouse.wheel(0, 100)
    page.wait_for_timeout(100)
    check("the wheel over the names does not zoom", page.evaluate("window.tlmJob.view()") == before)
    # drag pans by the pixels moved
    v = page.evaluate("window.tlmJob.view()")
    pw = page.evaluate("document.getElementById('jt-canvas').clientWidth") - page.evaluate("window.tlmJob.labelWidth") - 14
    page.mouse.move(left + 700, ctop + 100)
    page.mouse.down()
    page.mouse.move(left + 600, ctop + 100, steps=4)
    page.mouse.up()
    w = page.evaluate("window.tlmJob.view()")
    want = 100 / pw * (v[1] - v[0])
    check("a drag of 100 pixels pans the view by 100 pixels' time",
          abs((w[0] - v[0]) - want) < 1e-6 * (v[1] - v[0]) and abs((w[1] - w[0]) - (v[1] - v[0])) < 1e-3, (v, w, want))
    page.mouse.dblclick(left + 700, ctop + 100)
    w = page.evaluate("window.tlmJob.view()")
    check("a double-click shows the whole job", w == [0, page.evaluate("window.tlmJob.end")], w)
    # the OOM marker of the last rank
    k = n - 1
    oom = t[k][2]
    if oom >= 0:
        top = page.evaluate(f"window.tlmJob.show({k})")
        x = page.evaluate(f"window.tlmJob.x(window.tlmJob.tracks[{k}].start + window.tlmJob.tracks[{k}].ooms[0][0])")
        left, ctop = canvas_box(page)
        page.mouse.move(left + x, ctop + top + 20)
        got = readout(page)
        want = "OOM at +%.9f s on device 0: 1.0 TiB (1099511627776 bytes) requested" % ((t[k][1] + oom) / 1e9)
        check("hovering the OOM marker reads '%s'" % want, want in got, repr(got))
        check("the last track is drawn once scrolled to", page.evaluate("window.tlmJob.drawn()") >= 10)
    # the scale button
    page.click("#jt-bar button[data-act=scale]")
    check("the scale button switches to per-track scales",
          page.evaluate("document.querySelector('#jt-bar button[data-act=scale]').textContent") == "scale: per track")
    check("no script error, no request", not errors, errors[:3])
    if shot:  # per-track scales, the pointer on rank 3's peak (docs/job-timeline.png)
        page.evaluate("window.scrollTo(0, 0)")
        hover_peak(page, 3, t[3][0], "for the picture")
        box = page.evaluate("""(() => { const h = document.getElementById('timeline').getBoundingClientRect(),
            s = document.getElementById('jt-scroll').getBoundingClientRect(); return [h.top, s.bottom]; })()""")
        page.screenshot(path=shot, clip={"x": 0, "y": box[0] - 8, "width": 1300, "height": box[1] - box[0] + 16})
    page.close()


def bench(browser, pages):
    for path in pages:
        loads, ntracks = [], 0
        for _ in range(3):
            page, errors = load(browser, path)
            loads.append(float(page.evaluate("document.body.dataset.tlmReadyMs")))
            ntracks = int(page.evaluate("document.body.dataset.tlmTracks"))
            if errors:
                print("FAIL: %s: %s" % (path, errors[:3]))
                sys.exit(1)
            zoom = page.evaluate("""(() => { const J = window.tlmJob, E = J.end, out = [];
                for (let i = 0; i < 20; i++) { const a = E * (i % 10) / 20, s = E * (0.01 + (i % 5) * 0.1);
                  const t0 = performance.now(); J.setView(a, a + s); out.push(performance.now() - t0); }
                const t0 = performance.now(); J.setView(0, E); out.push(performance.now() - t0);
                return out; })()""")
            scroll = page.evaluate("""(() => { const s = document.getElementById('jt-scroll'), out = [];
                for (let i = 1; i <= 20; i++) { s.scrollTop = i * 997 % s.scrollHeight;
                  const t0 = performance.now(); window.tlmJob.show(Math.floor(i * 25.6)); out.push(performance.now() - t0); }
                return out; })()""")
            page.close()
        print("%s: %d tracks, page %.2f MiB, load %.0f ms (median of 3: %s), redraw after a zoom %.1f ms "
              "(median of 20), whole job %.1f ms, after a scroll %.1f ms (median of 20)"
              % (os.path.basename(path), ntracks, os.path.getsize(path) / 2 ** 20, statistics.median(loads),
                 ", ".join("%.0f" % x for x in loads), statistics.median(zoom[:-1]), zoom[-1], statistics.median(scroll)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--browser", required=True)
    ap.add_argument("--page")
    ap.add_argument("--truth")
    ap.add_argument("--shot")
    ap.add_argument("--bench", nargs="+")
    a = ap.parse_args()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=a.browser, args=["--no-sandbox", "--disable-gpu"])
        if a.bench:
            bench(browser, a.bench)
        else:
            test(browser, a.page, a.truth, a.shot)
        browser.close()
    sys.exit(1 if fails else 0)


if __name__ == "__main__":
    main()
