/* SPDX-License-Identifier: MIT */
/*
 * active_timeline.js - draws the HTML report's active-memory timelines
 * (render_html_active.c writes the data and explains its encoding).
 *
 * Each figure.active holds a base64 stream of events (allocations and
 * frees in trace order) and a JSON list of sites. At any moment the live
 * allocations are stacked in the order they were made, the oldest at the
 * bottom, as memory_viz stacks them: the band of allocation i starts at the
 * sum of the sizes of the live allocations made before it. A Fenwick tree
 * over the allocation order, holding the size of each live allocation,
 * answers "which allocation lies at this height" in O(log n).
 *
 * Drawing a view [v0, v1] (levels of detail: the cost follows the pixels
 * and the events inside the view, never the whole trace):
 *   1. the live set at v0, from the event index at v0 (an O(n) Fenwick
 *      build, no replay of the events before it);
 *   2. pass A over the view's events: for each pixel column, the event
 *      after which the column's total is highest (so a short peak is never
 *      lost between two columns), and the view's highest total (the y scale);
 *   3. pass B: the events applied again, and each column sampled at its
 *      moment: one Fenwick search per allocation crossed by the column, at
 *      most one per pixel row.
 * The pixels go to the canvas in one putImageData; a parallel buffer keeps
 * which allocation each pixel shows, for hover and click.
 */
(function () {
  'use strict';

  var LEFT = 64, BOTTOM = 22, TOP = 6;   /* plot margins inside the canvas, px */

  function human(b) {
    var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = 0;
    while (b >= 1023.95 && i < u.length - 1) { b /= 1024; i++; }
    return i ? b.toFixed(1) + ' ' + u[i] : b + ' B';
  }

  function secs(ns) {
    var s = ns / 1e9, a = Math.abs(s);
    return (a >= 100 ? s.toFixed(1) : a >= 1 ? s.toFixed(3) : s.toFixed(6)) + 's';
  }

  function duration(ns) {
    if (ns >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (ns >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (ns >= 1e3) return (ns / 1e3).toFixed(1) + ' \u00b5s';
    return ns + ' ns';
  }

  /* '#rrggbb' -> the 32-bit pixel of ImageData on a little-endian machine */
  function pixel(hex, shade) {
    var v = parseInt(hex.slice(1), 16), r = (v >> 16) & 0xff, g = (v >> 8) & 0xff, b = v & 0xff;
    r = Math.round(r * shade); g = Math.round(g * shade); b = Math.round(b * shade);
    return (0xff000000 | (b << 16) | (g << 8) | r) >>> 0;
  }

  /* ---- the data ------------------------------------------------------------- */

  function decode(text, nalloc) {
    var bin = atob(text.trim()), len = bin.length, p = 0;
    var buf = new Uint8Array(len);
    for (var i = 0; i < len; i++) buf[i] = bin.charCodeAt(i);
    var size = new Float64Array(nalloc), site = new Int32Array(nalloc);
    var ta = new Float64Array(nalloc), tf = new Float64Array(nalloc).fill(Infinity);
    var freeEv = new Int32Array(nalloc);
    var evT = new Float64Array(2 * nalloc), evA = new Int32Array(2 * nalloc);
    function next() { /* LEB128; exact up to 2^53 */
      var v = 0, mul = 1, c;
      do { c = buf[p++]; v += (c & 0x7f) * mul; mul *= 128; } while (c & 0x80 && p < len);
      return v;
    }
    var t = 0, made = 0, ne = 0;
    while (p < len && made <= nalloc) {
      t += next();
      var k = next();
      if (k === 0) {
        if (made === nalloc) break;
        size[made] = next();
        site[made] = next();
        ta[made] = t;
        freeEv[made] = 0x7fffffff;
        evT[ne] = t; evA[ne] = made; ne++;
        made++;
      } else {
        var i2 = made - k;
        if (i2 < 0) break; /* damaged: stop here */
        tf[i2] = t;
        freeEv[i2] = ne;
        evT[ne] = t; evA[ne] = -(i2 + 1); ne++;
      }
    }
    return {n: made, size: size, site: site, ta: ta, tf: tf, freeEv: freeEv,
            evT: evT.subarray(0, ne), evA: evA.subarray(0, ne), ne: ne};
  }

  /* first event with time > t */
  function upper(evT, ne, t) {
    var lo = 0, hi = ne;
    while (lo < hi) { var m = (lo + hi) >> 1; if (evT[m] <= t) lo = m + 1; else hi = m; }
    return lo;
  }

  /* ---- one figure -------------------------------------------------------------- */

  function Timeline(fig, index) {
    var canvas = fig.querySelector('canvas'), tip = fig.querySelector('.active-tip');
    var ctx = canvas.getContext('2d');
    var sites = JSON.parse(fig.querySelector('script.active-sites').textContent);
    var d = decode(fig.querySelector('script.active-data').textContent, Number(fig.dataset.n));
    var T0 = Number(fig.dataset.t0), T1 = Math.max(Number(fig.dataset.t1), T0 + 1);
    if (d.ne) { T0 = Math.min(T0, d.evT[0]); T1 = Math.max(T1, d.evT[d.ne - 1] + 1); }
    var W = canvas.width - LEFT, H = canvas.height - BOTTOM - TOP;
    /* each band's top pixel row is drawn darker, so that allocations of one site stay apart */
    var colour = new Uint32Array(sites.length + 1), edge = new Uint32Array(sites.length + 1);
    for (var s = 0; s < sites.length; s++) { colour[s] = pixel(sites[s][1], 1); edge[s] = pixel(sites[s][1], 0.72); }
    var PIN = pixel('#1b1f24', 1);
    var n = d.n, tree = new Float64Array(n + 1), high = 1;
    while (high * 2 <= n) high *= 2;
    var image = ctx.createImageData(W, H), pix = new Uint32Array(image.data.buffer);
    var pick = new Int32Array(W * H);
    var colEv = new Int32Array(W), colMax = new Float64Array(W);
    var view = {v0: T0, v1: T1}, ymax = 1, pinned = -1, full = null;

    function add(i, v) { for (i++; i <= n; i += i & -i) tree[i] += v; }

    /* the Fenwick tree of the allocations live after the first e events */
    function build(e) {
      tree.fill(0);
      var made = 0, total = 0, k = e - 1;
      while (k >= 0 && d.evA[k] < 0) k--;       /* the last allocation before e */
      if (k >= 0) made = d.evA[k] + 1;
      for (var i = 0; i < made; i++)
        if (d.freeEv[i] >= e) { tree[i + 1] += d.size[i]; total += d.size[i]; }
      for (var j = 1; j <= n; j++) { var p = j + (j & -j); if (p <= n) tree[p] += tree[j]; }
      return total;
    }

    function apply(e) {
      var a = d.evA[e];
      if (a >= 0) add(a, d.size[a]); else add(-a - 1, -d.size[-a - 1]);
    }

    function sample(c, total) {
      var per = ymax / H, row = 0, base = (H - 1) * W + c;
      while (row < H) {
        var b = (row + 0.5) * per;
        if (b >= total) break;
        var pos = 0, rem = b;
        for (var step = high; step; step >>= 1)
          if (pos + step <= n && tree[pos + step] <= rem) { pos += step; rem -= tree[pos]; }
        if (pos >= n) break;
        var top = b - rem + d.size[pos], last = Math.min(H, Math.ceil(top / per - 0.5));
        if (last <= row) last = row + 1;
        var px = pos === pinned ? PIN : colour[d.site[pos]], first = row;
        for (; row < last; row++) { var o = base - row * W; pix[o] = px; pick[o] = pos; }
        if (last - first >= 3 && pos !== pinned) pix[base - (last - 1) * W] = edge[d.site[pos]];
      }
      for (; row < H; row++) { var o2 = base - row * W; pix[o2] = 0xffffffff; pick[o2] = -1; }
    }

    function render() {
      var v0 = view.v0, v1 = view.v1, dt = (v1 - v0) / W;
      var e0 = upper(d.evT, d.ne, v0), e1 = upper(d.evT, d.ne, v1);
      var total = build(e0), start = total, c = 0;
      /* pass A */
      colMax[0] = total; colEv[0] = e0 - 1;
      for (var e = e0; e < e1; e++) {
        var ce = Math.min(W - 1, Math.floor((d.evT[e] - v0) / dt));
        while (c < ce) { c++; colMax[c] = total; colEv[c] = e - 1; }
        var a = d.evA[e];
        total += a >= 0 ? d.size[a] : -d.size[-a - 1];
        if (total > colMax[c]) { colMax[c] = total; colEv[c] = e; }
      }
      while (c < W - 1) { c++; colMax[c] = total; colEv[c] = e1 - 1; }
      ymax = 1;
      for (c = 0; c < W; c++) if (colMax[c] > ymax) ymax = colMax[c];
      /* pass B */
      var applied = e0 - 1;
      total = start;
      for (c = 0; c < W; c++) {
        if (c && colEv[c] === colEv[c - 1]) { /* nothing happened: the same column again */
          for (var r = 0, o = c; r < H; r++, o += W) { pix[o] = pix[o - 1]; pick[o] = pick[o - 1]; }
          continue;
        }
        while (applied < colEv[c]) {
          applied++;
          var a2 = d.evA[applied];
          total += a2 >= 0 ? d.size[a2] : -d.size[-a2 - 1];
          apply(applied);
        }
        sample(c, total);
      }
    }

    function axes() {
      ctx.fillStyle = '#fff';
      ctx.fillRect(0, 0, LEFT, canvas.height);
      ctx.fillRect(0, TOP + H, canvas.width, BOTTOM);
      ctx.fillRect(0, 0, canvas.width, TOP);
      ctx.fillStyle = '#57606a';
      ctx.strokeStyle = '#d0d7de';
      ctx.font = '11px system-ui, sans-serif';
      ctx.textAlign = 'right';
      ctx.textBaseline = 'middle';
      for (var k = 0; k <= 4; k++) {
        var y = TOP + H - (H * k) / 4;
        ctx.fillText(human(Math.round((ymax * k) / 4)), LEFT - 6, y);
        ctx.beginPath(); ctx.moveTo(LEFT - 3, y + 0.5); ctx.lineTo(LEFT, y + 0.5); ctx.stroke();
      }
      ctx.textAlign = 'center';
      ctx.textBaseline = 'top';
      for (var j = 0; j <= 6; j++) {
        var x = LEFT + (W * j) / 6;
        ctx.fillText(secs(view.v0 + ((view.v1 - view.v0) * j) / 6), Math.min(Math.max(x, LEFT + 24), canvas.width - 30),
                     TOP + H + 5);
      }
    }

    /* Draws the view; the whole run's picture is kept, so going back to it is free. */
    function draw() {
      var t = performance.now();
      var isFull = view.v0 === T0 && view.v1 === T1;
      if (isFull && full && full.pinned === pinned) {
        pix.set(full.pix); pick.set(full.pick); ymax = full.ymax;
      } else {
        render();
        if (isFull) full = {pix: pix.slice(), pick: pick.slice(), ymax: ymax, pinned: pinned};
      }
      ctx.putImageData(image, LEFT, TOP);
      axes();
      var ms = performance.now() - t;
      fig.dataset.drawMs = ms.toFixed(1);
      return ms;
    }

    var queued = false;
    function redraw() {
      if (queued) return;
      queued = true;
      requestAnimationFrame(function () { queued = false; draw(); });
    }

    /* ---- interaction ---------------------------------------------------------------- */

    function at(ev) {
      var r = canvas.getBoundingClientRect(); /* the content box: inside the border */
      var x = Math.floor(((ev.clientX - r.left - canvas.clientLeft) * canvas.width) / canvas.clientWidth) - LEFT;
      var y = Math.floor(((ev.clientY - r.top - canvas.clientTop) * canvas.height) / canvas.clientHeight) - TOP;
      return {x: x, y: y, inside: x >= 0 && x < W && y >= 0 && y < H,
              t: view.v0 + ((view.v1 - view.v0) * Math.max(0, Math.min(W, x))) / W};
    }

    function describe(i) {
      var st = sites[d.site[i]] || ['?', '#8c959f', null];
      var freed = isFinite(d.tf[i]) ? 'freed ' + secs(d.tf[i]) + ' (after ' + duration(d.tf[i] - d.ta[i]) + ')'
                                    : 'live at the end';
      var lines = [human(d.size[i]) + (d.size[i] >= 1024 ? ' (' + d.size[i] + ' bytes)' : '') +
                   (st[3] ? ', ' + st[3] : ''),
                   'allocated ' + secs(d.ta[i]) + ', ' + freed, 'at ' + st[0]];
      if (st[2]) lines.push(st[2].slice(0, 16).join('\n') + (st[2].length > 16 ? '\n\u2026' : ''));
      return lines.join('\n');
    }

    function show(i, ev) {
      tip.textContent = describe(i);
      tip.hidden = false;
      var r = fig.querySelector('.active-view').getBoundingClientRect();
      var x = ev ? ev.clientX - r.left + 14 : LEFT + 8, y = ev ? ev.clientY - r.top + 14 : TOP + 8;
      tip.style.left = Math.min(x, r.width - 380) + 'px';
      tip.style.top = y + 'px';
    }

    function row(i) {
      return document.getElementById('active-' + index + '-site-' + d.site[i]);
    }

    canvas.addEventListener('mousemove', function (ev) {
      if (drag) {
        var dx = ((ev.clientX - drag.x) * canvas.width) / canvas.getBoundingClientRect().width;
        var span = drag.v1 - drag.v0, shift = (-dx * span) / W;
        shift = Math.max(T0 - drag.v0, Math.min(T1 - drag.v1, shift));
        view.v0 = drag.v0 + shift; view.v1 = drag.v1 + shift;
        drag.moved = drag.moved || Math.abs(dx) > 2;
        redraw();
        return;
      }
      if (pinned >= 0) return;
      var p = at(ev), i = p.inside ? pick[p.y * W + p.x] : -1;
      if (i >= 0) show(i, ev); else tip.hidden = true;
    });
    canvas.addEventListener('mouseleave', function () { if (pinned < 0) tip.hidden = true; });

    var drag = null;
    canvas.addEventListener('mousedown', function (ev) {
      drag = {x: ev.clientX, v0: view.v0, v1: view.v1, moved: false};
    });
    /* A click pins; its row is brought into view a moment later, so that the
     * two clicks of a double-click (which shows the whole run) do not scroll. */
    var jump = 0;
    window.addEventListener('mouseup', function (ev) {
      if (!drag) return;
      var moved = drag.moved;
      drag = null;
      if (moved || ev.target !== canvas) return;
      clearTimeout(jump);
      var p = at(ev), i = p.inside ? pick[p.y * W + p.x] : -1;
      fig.querySelectorAll('tr.hit').forEach(function (tr) { tr.classList.remove('hit'); });
      pinned = i === pinned ? -1 : i;
      fig.dataset.pinned = String(pinned);
      if (pinned >= 0) {
        show(pinned, ev);
        var tr = row(pinned);
        if (tr) {
          tr.classList.add('hit');
          jump = setTimeout(function () { tr.scrollIntoView({block: 'center'}); }, 350);
        } else {
          tip.textContent += '\n(this site is not among the rows of the table)';
        }
      } else {
        tip.hidden = true;
      }
      draw();
    });

    canvas.addEventListener('wheel', function (ev) {
      ev.preventDefault();
      var p = at(ev), f = Math.pow(1.25, ev.deltaY > 0 ? 1 : -1);
      var span = Math.max(Math.min((view.v1 - view.v0) * f, T1 - T0), 100);
      var frac = (p.t - view.v0) / (view.v1 - view.v0);
      var v0 = Math.max(T0, p.t - frac * span);
      view.v0 = v0; view.v1 = Math.min(T1, v0 + span);
      if (view.v1 - view.v0 < span) view.v0 = Math.max(T0, view.v1 - span);
      redraw();
    }, {passive: false});

    canvas.addEventListener('dblclick', function () { clearTimeout(jump); view.v0 = T0; view.v1 = T1; redraw(); });

    var api = {
      /* for tests and benchmarks: draw [v0, v1] now, return the milliseconds */
      zoom: function (v0, v1) { view.v0 = Math.max(T0, v0); view.v1 = Math.min(T1, v1); return draw(); },
      reset: function () { view.v0 = T0; view.v1 = T1; return draw(); },
      range: function () { return [T0, T1]; },
      view: function () { return [view.v0, view.v1]; },
      allocations: n,
      ymax: function () { return ymax; },
      pinned: function () { return pinned; },
      describe: describe,
      times: function (i) { return [d.ta[i], d.tf[i]]; },
      /* canvas-relative position of the middle of allocation i's band in the current view, or null */
      find: function (i) {
        var cols = []; /* the middle column the band crosses, then the middle of it there */
        for (var c = 0; c < W; c++) for (var r = 0; r < H; r++) if (pick[r * W + c] === i) { cols.push(c); break; }
        if (!cols.length) return null;
        var mc = cols[cols.length >> 1], rows = [];
        for (var r2 = 0; r2 < H; r2++) if (pick[r2 * W + mc] === i) rows.push(r2);
        return {x: LEFT + mc, y: TOP + rows[rows.length >> 1]};
      },
    };
    draw();
    return api;
  }

  var t0 = performance.now(), all = [];
  document.querySelectorAll('figure.active').forEach(function (fig, i) {
    try {
      all.push(Timeline(fig, i));
    } catch (e) {
      fig.insertAdjacentHTML('beforeend', '<p class="note">The timeline could not be drawn.</p>');
      fig.dataset.error = String(e);
    }
  });
  window.tlmActive = all;
  document.body.dataset.tlmActive = String(all.length);
  document.body.dataset.tlmActiveMs = (performance.now() - t0).toFixed(1);
  window.tlmActiveDone = performance.now(); /* since the navigation started: the load time */
})();
