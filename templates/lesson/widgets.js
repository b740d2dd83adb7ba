
  // ---- clickable teaching widgets (request path, formula terms, three-step design) ---------
  document.querySelectorAll("[data-explain]").forEach((btn) => {
    btn.addEventListener("click", () => {
      const group = btn.dataset.group;
      document.querySelectorAll(`[data-group="${group}"]`).forEach((b) => b.setAttribute("aria-pressed", String(b === btn)));
      document.querySelectorAll(`[data-panel-group="${group}"]`).forEach((p) => { p.hidden = p.dataset.panel !== btn.dataset.explain; });
    });
  });
