// Small page behaviours without inline scripts (so a strict CSP stays possible):
// dismissible notices, "keep one of this group", and the reason character counter (trimmed length, as the server counts it).
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
  // "Keep one of this group": tick every member the server named in data-keep-one and untick the rest of
  // that group (the kept one). Without JavaScript the same element is a link whose page pre-selects them.
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("[data-keep-one]");
    if (!link) return;
    var head = link.closest("tr[data-group]");
    var form = document.getElementById("retire-form");
    if (!head || !form) return;
    event.preventDefault();
    var others = link.getAttribute("data-keep-one").split(" ");
    var rows = form.querySelectorAll('tr[data-group="' + head.getAttribute("data-group") + '"]');
    rows.forEach(function (row) {
      var box = row.querySelector('input[type="checkbox"][name="members"]');
      if (!box) return;
      box.checked = others.indexOf(box.value) !== -1;
    });
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
  document.addEventListener("DOMContentLoaded", function () { initCounters(document); });
  document.addEventListener("htmx:afterSettle", function (event) { initCounters(event.target); });
})();
