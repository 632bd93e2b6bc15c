// The test page's live list: every "row" event adds an item, as text.
const src = new EventSource("/events");
src.addEventListener("row", (e) => {
  const li = document.createElement("li");
  li.textContent = JSON.parse(e.data).text;
  document.getElementById("live").append(li);
});
