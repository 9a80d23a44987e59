// sbench pages: sortable tables, figure tooltips, legend toggles. No
// library and no request: everything works from file://.
(function () {
  'use strict';

  // Tables: a click (or Enter) on a header sorts by that column, again to
  // reverse. Numbers sort as numbers — "1.5 KiB" after "512 B" — and a
  // missing value ("—") last. A row with detail rows under it (a failed
  // run's error) is its own <tbody> and moves with them.
  var units = { B: 1, KiB: 1024, MiB: 1048576, GiB: 1073741824, TiB: 1099511627776, K: 1024, M: 1048576, G: 1073741824 };
  var numRE = /^[-+]?(?:\d[\d,]*\.?\d*|\.\d+)(?:e[-+]?\d+)?/i;
  function key(cell) {
    if (!cell) return null;
    var v = cell.getAttribute('data-v');
    if (v !== null) return parseFloat(v);
    var s = cell.textContent.trim();
    if (s === '' || s === '\u2014' || s === '-') return null;
    var m = numRE.exec(s);
    if (!m) return s.toLowerCase();
    var n = parseFloat(m[0].replace(/,/g, ''));
    var rest = s.slice(m[0].length).trim();
    var u = /^([KMGT]i?B|[KMG]|B)\b/.exec(rest);
    if (u && units[u[1]]) n *= units[u[1]];
    return n;
  }
  function compare(a, b) {
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    var an = typeof a === 'number', bn = typeof b === 'number';
    if (an && bn) return a - b;
    if (an) return -1;
    if (bn) return 1;
    return a < b ? -1 : 1;
  }
  function sortTable(table, col, th) {
    var dir = th.getAttribute('aria-sort') === 'ascending' ? -1 : 1;
    var groups = [];
    if (table.tBodies.length > 1) {
      for (var i = 0; i < table.tBodies.length; i++) groups.push(table.tBodies[i]);
    } else if (table.tBodies.length === 1) {
      groups = Array.prototype.slice.call(table.tBodies[0].rows);
    }
    var keyed = groups.map(function (g, i) {
      var row = g.rows ? g.rows[0] : g;
      return { g: g, k: key(row.cells[col]), i: i };
    });
    keyed.sort(function (a, b) {
      var c = compare(a.k, b.k);
      if (a.k === null || b.k === null) return c || a.i - b.i; // missing last either way
      return dir * c || a.i - b.i;
    });
    var parent = table.tBodies.length > 1 ? table : table.tBodies[0];
    keyed.forEach(function (e) { parent.appendChild(e.g); });
    var ths = th.parentNode.cells;
    for (var j = 0; j < ths.length; j++) ths[j].setAttribute('aria-sort', 'none');
    th.setAttribute('aria-sort', dir === 1 ? 'ascending' : 'descending');
  }
  Array.prototype.forEach.call(document.querySelectorAll('table.sb-sort'), function (table) {
    if (!table.tHead) return;
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, col) {
      th.tabIndex = 0;
      th.setAttribute('aria-sort', 'none');
      th.addEventListener('click', function () { sortTable(table, col, th); });
      th.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); sortTable(table, col, th); }
      });
    });
  });

  // Figures: a point's tooltip on hover, its run on click.
  var tip = document.getElementById('sb-tip');
  var current = null;
  function place(e) {
    var x = e.clientX + 14, y = e.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = Math.max(4, e.clientX - w - 14);
    if (y + h > window.innerHeight - 4) y = Math.max(4, e.clientY - h - 14);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function target(e) {
    var t = e.target;
    return t && t.closest ? t.closest('circle[data-tip]') : null;
  }
  document.addEventListener('mouseover', function (e) {
    var c = target(e);
    if (!c || !tip) return;
    if (current) current.classList.remove('on');
    current = c;
    c.classList.add('on');
    tip.textContent = c.getAttribute('data-tip');
    tip.hidden = false;
    place(e);
  });
  document.addEventListener('mousemove', function (e) { if (current && tip && !tip.hidden) place(e); });
  document.addEventListener('mouseout', function (e) {
    var c = target(e);
    if (!c || c !== current) return;
    c.classList.remove('on');
    current = null;
    if (tip) tip.hidden = true;
  });

  // Legends: a click on an entry hides its series (lines, points, band and
  // hover targets), another shows it again. Buttons of class sb-toggle
  // (the site's history charts) do the same for the figure before them.
  function toggle(svg, s, entry) {
    var off = !entry.classList.contains('off');
    entry.classList.toggle('off', off);
    entry.setAttribute('aria-pressed', off ? 'false' : 'true');
    Array.prototype.forEach.call(svg.querySelectorAll('.sb-s[data-s="' + s + '"], .sb-hot circle[data-s="' + s + '"]'), function (el) {
      el.classList.toggle('sb-hidden', off);
    });
  }
  document.addEventListener('click', function (e) {
    var t = e.target;
    if (!t || !t.closest) return;
    var leg = t.closest('.sb-leg');
    if (leg) { toggle(leg.closest('svg'), leg.getAttribute('data-s'), leg); return; }
    var btn = t.closest('button.sb-toggle');
    if (btn) {
      var fig = document.getElementById(btn.getAttribute('data-fig'));
      if (fig) toggle(fig.querySelector('svg'), btn.getAttribute('data-s'), btn);
      return;
    }
    var c = t.closest('circle[data-href]');
    if (c) {
      var href = c.getAttribute('data-href');
      if (href.charAt(0) !== '#' || document.getElementById(href.slice(1))) window.location.href = href;
    }
  });
}());
