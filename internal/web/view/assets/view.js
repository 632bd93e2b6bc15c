// hosteval view's one script. It keeps a page over a run in progress up
// to date: the server says on /events which run grew, and each part of the
// page marked "live" for that run (data-live: a run's key, or * for any)
// is fetched again and put in place. And it applies a filter as soon as
// one of its choices changes. The pages work without it, by reload.
(function () {
  "use strict";

  function bindFilters() {
    for (const form of document.querySelectorAll("form.filters")) {
      if (form.dataset.bound) continue;
      form.dataset.bound = "1";
      // Leave the filters that are not set out of the address.
      form.addEventListener("formdata", (e) => {
        for (const [name, value] of [...e.formData]) {
          if (value === "") e.formData.delete(name);
        }
      });
    }
    for (const form of document.querySelectorAll("form.autosubmit")) {
      for (const select of form.querySelectorAll("select")) {
        if (select.dataset.bound) continue;
        select.dataset.bound = "1";
        select.addEventListener("change", () => form.requestSubmit());
      }
    }
  }

  let pending = null;
  let busy = false;

  async function refresh() {
    if (busy) {
      pending = setTimeout(refresh, 300);
      return;
    }
    busy = true;
    try {
      const res = await fetch(location.href, { cache: "no-store", headers: { Accept: "text/html" } });
      if (!res.ok) return;
      const next = new DOMParser().parseFromString(await res.text(), "text/html");
      for (const part of document.querySelectorAll(".live[id]")) {
        const fresh = next.getElementById(part.id);
        if (fresh) part.replaceWith(document.adoptNode(fresh));
      }
      bindFilters();
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
    } finally {
      busy = false;
    }
  }

  function watch() {
    const wanted = new Set([...document.querySelectorAll(".live[data-live]")].map((el) => el.dataset.live));
    if (wanted.size === 0 || !window.EventSource) return;
    const events = new EventSource("/events");
    events.addEventListener("run", (e) => {
      const ev = JSON.parse(e.data);
      if (!wanted.has("*") && !wanted.has(ev.run)) return;
      clearTimeout(pending);
      pending = setTimeout(refresh, 250);
    });
    events.addEventListener("open", () => { document.body.dataset.watching = "1"; });
  }

  bindFilters();
  watch();
})();
