// Small page behaviours without inline scripts (so a strict CSP stays possible):
// dismissible notices, and the reason character counter (trimmed length, as the server counts it).
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
  document.addEventListener("DOMContentLoaded", function () { initCounters(document); });
  document.addEventListener("htmx:afterSettle", function (event) { initCounters(event.target); });
})();
