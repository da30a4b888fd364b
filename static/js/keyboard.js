// Keyboard-first triage, selection feedback and focus across htmx swaps (docs/reviewing.md, "Keyboard").
// No inline script or handler anywhere (the CSP is default-src 'self'): every behaviour hangs off data-*
// attributes the templates render, and each works without JavaScript in a plainer form.
//
//   j / k   next / previous row (piles in the queue, members in a pile): focuses the row's checkbox or link
//   x       select the current member          a   select every member (again: none)
//   g       select the current member's whole fact (again: none of it)
//   o       keep one of the current member's fact (selects the others)
//   f       resolve by facts (selects all but one of each fact; the reason and Retire still needed)
//   m       the current member's fact is the same fact as… (fills the merge form)
//   s       take the current member out of its fact (fills the split form)
//   r       the reason box                     Ctrl+Enter   submit the form being typed in
//   /       the filter                         ?   this list (a dialog; Esc closes it)
//
// Shortcuts never fire while typing in a field (only Ctrl+Enter does, to submit it).
(function () {
  "use strict";

  var ROWS = "[data-rows] > tbody > tr[data-row]";
  var MEMBER = 'input[type="checkbox"][name="members"]';
  var lastRow = null; // data-row of the row focus was last in: the row "acted on" by a form below the table

  function rows() { return Array.prototype.slice.call(document.querySelectorAll(ROWS)); }
  function rowControl(row) {
    return row.querySelector(MEMBER) || row.querySelector("a[href]") || row.querySelector("input, button");
  }
  function rowByKey(root, key) {
    var found = null;
    (root || document).querySelectorAll(ROWS).forEach(function (row) {
      if (row.getAttribute("data-row") === key) found = row;
    });
    return found;
  }
  function currentRow() {
    var active = document.activeElement;
    var row = active && active.closest ? active.closest("tr[data-row]") : null;
    if (row && row.matches(ROWS)) return row;
    return lastRow ? rowByKey(document, lastRow) : null;
  }
  function focusRow(row) {
    var control = row && rowControl(row);
    if (!control) return false;
    control.focus();
    row.scrollIntoView({ block: "nearest" });
    return true;
  }
  function move(step) {
    var all = rows();
    if (!all.length) return;
    var at = all.indexOf(currentRow());
    var next = at === -1 ? (step > 0 ? 0 : all.length - 1) : Math.min(all.length - 1, Math.max(0, at + step));
    focusRow(all[next]);
  }

  document.addEventListener("focusin", function (event) {
    var row = event.target.closest && event.target.closest("tr[data-row]");
    if (row && row.matches(ROWS)) lastRow = row.getAttribute("data-row");
  });

  // --- selection: "2 of 9 selected", the button's count, the count after the retire ------------------
  function memberBoxes(form) { return Array.prototype.slice.call(form.querySelectorAll(MEMBER)); }

  function selectionChanged(form) {
    if (!form || !form.hasAttribute("data-selection")) return;
    var boxes = memberBoxes(form);
    var n = boxes.filter(function (b) { return b.checked; }).length;
    var total = boxes.length;
    var count = parseInt(form.getAttribute("data-count"), 10);
    var max = parseInt(form.getAttribute("data-max-active"), 10);
    var enabled = form.getAttribute("data-budget-enabled") === "true";
    var set = function (selector, text) {
      form.querySelectorAll(selector).forEach(function (el) { el.textContent = text; });
    };
    set("[data-selected-count]", n + " of " + total + " selected");
    set("[data-retire-label]", n ? "Retire " + n + " lesson" + (n === 1 ? "" : "s") : "Retire selected lessons");
    var after = count - n;
    var verdict = !enabled ? "budget off" : after > max ? "still over by " + (after - max) : "within budget";
    set("[data-retire-preview]", "After the retire: " + count + " \u2192 " + after + " of " + max + " (" + verdict + ")");
    form.querySelectorAll("[data-select-all]").forEach(function (all) {
      all.checked = total > 0 && n === total;
      all.indeterminate = n > 0 && n < total;
    });
  }
  function setBoxes(form, boxes, checked) {
    boxes.forEach(function (b) { b.checked = checked; });
    selectionChanged(form);
  }
  function initSelection(root) {
    (root || document).querySelectorAll("form[data-selection]").forEach(selectionChanged);
  }

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!target.matches) return;
    var form = target.closest("form[data-selection]");
    if (!form) return;
    if (target.matches("[data-select-all]")) setBoxes(form, memberBoxes(form), target.checked);
    else if (target.matches(MEMBER)) selectionChanged(form);
  });
  // app.js's "keep one of this group" ticks the boxes on click; count them afterwards.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("[data-keep-one]");
    if (link) setTimeout(function () { selectionChanged(link.closest("form[data-selection]")); }, 0);
  });

  function groupBoxes(form, row) {
    var group = row.getAttribute("data-group");
    return memberBoxes(form).filter(function (b) { return b.closest("tr").getAttribute("data-group") === group; });
  }
  function toggleAll(form, boxes) {
    setBoxes(form, boxes, !boxes.every(function (b) { return b.checked; }));
  }

  // --- shortcuts ---------------------------------------------------------------------------------------
  function typing(el) {
    if (!el || !el.matches) return false;
    if (el.isContentEditable || el.matches("textarea, select")) return true;
    return el.matches("input") && !el.matches('[type="checkbox"], [type="radio"], [type="button"], [type="submit"], [type="reset"], [type="file"]');
  }
  function focusFirst(selector) {
    var el = document.querySelector(selector);
    if (!el) return false;
    el.focus();
    if (el.select && el.matches("input")) el.select();
    return true;
  }
  function openHelp() {
    var dialog = document.getElementById("shortcuts");
    if (dialog && !dialog.open) dialog.showModal();
    return !!dialog;
  }

  function headOf(form, row) {
    return form.querySelector('tr[data-fact-head][data-group="' + row.getAttribute("data-group") + '"]');
  }
  function clickIn(form, root, selector) {
    var target = form && root && root.querySelector(selector);
    if (!target) return false;
    target.click();
    return true;
  }

  var ACTIONS = {
    j: function () { move(1); return true; },
    k: function () { move(-1); return true; },
    x: function (form, row) {
      var box = row && row.querySelector(MEMBER);
      if (!box) return false;
      box.checked = !box.checked;
      selectionChanged(form);
      return true;
    },
    a: function (form) {
      if (!form) return false;
      toggleAll(form, memberBoxes(form));
      return true;
    },
    g: function (form, row) {
      if (!form || !row) return false;
      toggleAll(form, groupBoxes(form, row));
      return true;
    },
    o: function (form, row) {
      if (clickIn(form, row && headOf(form, row), "[data-keep-one]")) return true;
      if (!form || !row) return false;
      say(ALONE); // a rule alone in its fact: nothing to keep one of, and the reader is told so
      return true;
    },
    m: function (form, row) { return clickIn(form, row && headOf(form, row), "[data-merge]"); },
    s: function (form, row) { return clickIn(form, row, "[data-split]"); },
    f: function (form) { return clickIn(form, form, "[data-resolve]"); },
    r: function () { return focusFirst('main textarea[name="reason"], main textarea[name$="-reason"]'); },
    // the retire notice's Undo, wherever focus went after the retire (issue 23, newcomer item 9)
    u: function () {
      var undo = document.querySelector("main [data-undo]");
      if (!undo) return false;
      undo.click();
      return true;
    },
    "/": function () {
      return focusFirst('main form[role="search"] input[name="q"]') ||
        focusFirst('main form[role="search"] input:not([type="hidden"]):not([type="checkbox"]), main form[role="search"] select');
    },
    "?": openHelp,
  };

  document.addEventListener("keydown", function (event) {
    if (event.defaultPrevented || event.isComposing) return;
    var target = event.target;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      var owner = target.closest && target.closest("form[method=post]");
      if (owner) {
        event.preventDefault();
        owner.requestSubmit();
      }
      return;
    }
    if (typing(target) || event.ctrlKey || event.metaKey || event.altKey) return;
    if (document.querySelector("dialog[open]")) return; // the dialog's own keys (Tab, Esc)
    var action = ACTIONS[event.key];
    if (!action) return;
    var row = currentRow();
    var form = (row && row.closest("form[data-selection]")) || document.querySelector("form[data-selection]");
    if (action(form, row)) event.preventDefault();
  });

  document.addEventListener("click", function (event) {
    var opener = event.target.closest && event.target.closest("[data-open-shortcuts]");
    if (opener) {
      event.preventDefault();
      openHelp();
      return;
    }
    var closer = event.target.closest && event.target.closest("[data-close-dialog]");
    if (closer) closer.closest("dialog").close();
  });

  // --- focus across htmx swaps: never lost to <body> -------------------------------------------------
  // Before a request from inside a swapped region, note what has focus; after the swap, focus the same
  // control (by id, the same column's sort link, or the same row), or after a decision (a POST) its error
  // when it was refused, else the row acted on, else the next row that is still there, else the region's
  // notice or heading.
  var pending = null;

  function describe(elt, target) {
    var region = (target && target.closest && target.closest("[data-region]")) || (elt.closest && elt.closest("[data-region]"));
    if (!region || !region.id) return null;
    var active = document.activeElement;
    var th = active && active.closest && active.closest("th");
    return {
      region: region.id,
      post: (elt.getAttribute("hx-post") || (elt.closest("[hx-post]") && elt.closest("[hx-post]").getAttribute("hx-post"))) ? true : false,
      id: active && region.contains(active) ? active.id : "",
      column: th && region.contains(th) ? Array.prototype.indexOf.call(th.parentNode.children, th) : -1,
      row: lastRow,
      order: Array.prototype.map.call(region.querySelectorAll("tr[data-row]"), function (r) { return r.getAttribute("data-row"); }),
    };
  }
  function restore(note) {
    var region = document.getElementById(note.region);
    var active = document.activeElement;
    if (!region) return;
    // Focus survived the swap (it was outside the swapped part, or htmx kept it by id): leave it there,
    // except after a decision, where htmx puts it back in the emptied form and the row acted on wins.
    var kept = active && active !== document.body && active.isConnected;
    if (kept && (!note.post || !region.contains(active))) return;
    var el = null;
    // Resolve by facts: the reason box it asks for (data-focus-after names it).
    var next = note.post && region.querySelector("[data-focus-after]");
    if (next) el = document.querySelector(next.getAttribute("data-focus-after"));
    // A refused decision: its first error in the page (a field's, else the form's summary), which the rows
    // above the form would otherwise keep out of view.
    if (!el && note.post) el = region.querySelector(".form-summary, .field-error[role=alert]");
    if (!note.post && note.id) el = document.getElementById(note.id);
    if (!el && !note.post && note.column >= 0) {
      var th = region.querySelectorAll("thead tr > th")[note.column];
      el = th && th.querySelector("a, input");
    }
    if (!el && note.row) {
      var at = note.order.indexOf(note.row);
      var candidates = at === -1 ? [note.row] : note.order.slice(at).concat(note.order.slice(0, at).reverse());
      for (var i = 0; i < candidates.length && !el; i++) {
        var row = rowByKey(region, candidates[i]);
        el = row && rowControl(row);
      }
    }
    if (!el) el = region.querySelector(".notice[data-announce]");
    if (!el) {
      var first = region.querySelector(ROWS); // a new page of the queue: its first row
      el = (first && rowControl(first)) || region.querySelector("h1, h2");
    }
    if (!el) el = region;
    if (!el.matches("a[href], input, select, textarea, button")) el.setAttribute("tabindex", "-1");
    el.focus();
  }

  // What `o` says on a member that states its fact alone (issue 23, newcomer item 8).
  var ALONE = "This rule is the only one of its fact: there is nothing to keep one of.";

  // One sentence read out through the live region (and shown under the selection count).
  function say(text) {
    var out = document.getElementById("announcer");
    var shown = document.querySelector("[data-keyboard-said]");
    if (shown) shown.textContent = text;
    if (!out) return;
    out.textContent = "";
    setTimeout(function () { out.textContent = text; }, 50);
  }

  // Only the notice is read out, through one live region outside every swapped region (base.html).
  function announce(root) {
    var out = document.getElementById("announcer");
    var notice = (root || document).querySelector("[data-announce]");
    if (!out || !notice) return;
    var text = notice.getAttribute("data-announce") || (notice.querySelector("span") || notice).textContent;
    out.textContent = "";
    // a change after a pause is what screen readers announce; the same text twice in a row too
    setTimeout(function () { out.textContent = text.replace(/\s+/g, " ").trim(); }, 50);
  }

  // Stacked rows at narrow widths (app.css, "small screens") print each cell's column name from data-label.
  function labelTables(root) {
    (root || document).querySelectorAll("table.data").forEach(function (table) {
      var heads = [];
      table.querySelectorAll("thead tr:first-child > th").forEach(function (th) {
        var text = th.getAttribute("data-label") || th.textContent.replace(/[\u25b2\u25bc]/g, "").replace(/\s+/g, " ").trim();
        for (var span = th.colSpan || 1; span > 0; span--) heads.push(text);
      });
      table.querySelectorAll("tbody > tr").forEach(function (tr) {
        var col = 0;
        Array.prototype.forEach.call(tr.children, function (cell) {
          if (!cell.hasAttribute("data-label") && (cell.colSpan || 1) === 1 && heads[col]) cell.setAttribute("data-label", heads[col]);
          col += cell.colSpan || 1;
        });
      });
    });
  }

  document.addEventListener("htmx:beforeRequest", function (event) { pending = describe(event.detail.elt, event.detail.target); });
  document.addEventListener("htmx:afterSettle", function (event) {
    var root = event.detail.target && event.detail.target.isConnected ? event.detail.target : document;
    labelTables(document);
    initSelection(document);
    if (pending) {
      var region = document.getElementById(pending.region);
      restore(pending);
      announce(region || root);
      pending = null;
    }
  });
  document.addEventListener("DOMContentLoaded", function () {
    labelTables(document);
    initSelection(document);
  });
})();
