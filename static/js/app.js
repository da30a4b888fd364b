// Small page behaviours without inline scripts (so a strict CSP stays possible):
// dismissible notices, "keep one of this fact", filling the mark forms, and the reason character counter (trimmed length, as the server counts it).
(function () {
  "use strict";
  var MAX_DEFAULT = 500;

  function updateCounter(textarea) {
    var out = document.querySelector('[data-counter-for="' + textarea.id + '"]');
    if (!out) return;
    var max = parseInt(textarea.getAttribute("data-counter"), 10) || MAX_DEFAULT;
    var n = textarea.value.trim().length;
    out.textContent = n + " / " + max + " characters";
    out.classList.toggle("over", n > max);
  }

  function initCounters(root) {
    (root || document).querySelectorAll("textarea[data-counter]").forEach(updateCounter);
  }

  document.addEventListener("input", function (event) {
    if (event.target.matches && event.target.matches("textarea[data-counter]")) updateCounter(event.target);
  });
  document.addEventListener("click", function (event) {
    var button = event.target.closest && event.target.closest("[data-dismiss]");
    if (button) {
      var notice = button.closest(".notice");
      if (notice) notice.remove();
    }
  });
  // "Keep one of this fact": tick every member of the fact but its keeper (the one picked in the fact's
  // Keeper list, else the one the server named) and untick the keeper. Without JavaScript the same element
  // is a link whose page pre-selects all but the suggested keeper.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("[data-keep-one]");
    if (!link) return;
    var head = link.closest("tr[data-group]");
    var form = document.getElementById("retire-form");
    if (!head || !form) return;
    event.preventDefault();
    var keeper = head.querySelector("select[data-keeper]");
    var others = link.getAttribute("data-keep-one").split(" ");
    var rows = form.querySelectorAll('tr[data-group="' + head.getAttribute("data-group") + '"]');
    rows.forEach(function (row) {
      var box = row.querySelector('input[type="checkbox"][name="members"]');
      if (!box) return;
      box.checked = keeper ? box.value !== keeper.value : others.indexOf(box.value) !== -1;
    });
  });
  // "Same fact as…" and "take out": fill the mark form below the table and put focus in it, without a
  // reload. Without JavaScript they are links whose page fills the same form.
  function fill(selectId, value, focusId) {
    var select = document.getElementById(selectId);
    var focus = document.getElementById(focusId);
    if (!select || !focus) return false;
    select.value = value;
    focus.focus();
    focus.scrollIntoView({ block: "center" });
    return true;
  }
  document.addEventListener("click", function (event) {
    var merge = event.target.closest && event.target.closest("[data-merge]");
    if (merge && fill("id_merge-fact", merge.getAttribute("data-merge"), "id_merge-other")) {
      event.preventDefault();
      return;
    }
    var split = event.target.closest && event.target.closest("[data-split]");
    if (split && fill("id_split-member", split.getAttribute("data-split"), "id_split-reason")) event.preventDefault();
  });
  // A write that found the database busy (503 with Retry-After, review/locking.py) swaps nothing: say so
  // in an alert at the top of the page, in the server's words, so the reviewer knows to try again.
  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    if (!xhr || xhr.status !== 503) return;
    var text = new DOMParser().parseFromString(xhr.responseText, "text/html").body.textContent.trim();
    var main = document.querySelector("main") || document.body;
    var notice = document.getElementById("busy-notice");
    if (!notice) {
      notice = document.createElement("div");
      notice.id = "busy-notice";
      notice.className = "notice notice-error";
      notice.setAttribute("role", "alert");
      main.insertBefore(notice, main.firstChild);
    }
    notice.textContent = text || "The server is busy; nothing was saved. Try again in a few seconds.";
  });
  // A poll (hx-trigger "every …") sends back the ETag its last answer carried: while nothing changed the
  // server answers 304 without building the region, and nothing is swapped (the htmx-config in base.html).
  // The pages are no-store, so the browser keeps no tag of its own. Keyed by the poll's URL: an outerHTML
  // swap replaces the element itself.
  var pollTags = {};
  function pollUrl(elt) {
    var trigger = elt && elt.getAttribute && elt.getAttribute("hx-trigger");
    return trigger && /\bevery\b/.test(trigger) ? elt.getAttribute("hx-get") : null;
  }
  document.addEventListener("htmx:configRequest", function (event) {
    var url = pollUrl(event.detail.elt);
    if (url && pollTags[url]) event.detail.headers["If-None-Match"] = pollTags[url];
  });
  // beforeSwap, not afterRequest: after an outerHTML swap the old element is out of the document and its
  // events no longer reach this listener.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var url = pollUrl(event.detail.elt);
    var tag = event.detail.xhr && event.detail.xhr.getResponseHeader("ETag");
    if (url && tag) pollTags[url] = tag;
  });
  document.addEventListener("DOMContentLoaded", function () { initCounters(document); });
  document.addEventListener("htmx:afterSettle", function (event) { initCounters(event.target); });
})();
