// The page's only script, loaded from this server (the CSP allows nothing else): "/" moves
// the focus to the search box, as on many sites. Everything works without it.
document.addEventListener("keydown", (event) => {
  const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement;
  const box = document.getElementById("q");
  if (event.key === "/" && !typing && box) {
    event.preventDefault();
    box.focus();
  }
});
