// Building the page's nodes from API data: text is always set as text, so no memory can inject markup.

export function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function badge(text, kind = text) {
  return el("span", { class: `badge ${kind}` }, text);
}

export function when(iso) {
  if (!iso) return "never";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function number(value, digits = 2) {
  return typeof value === "number" ? value.toFixed(digits) : "—";
}

// A 0–1 value as a bar; `centre` draws it from that point (sentiment: 0.5 is neutral).
export function gauge(name, value, { centre = null, label = name } = {}) {
  const clamped = Math.max(0, Math.min(1, value));
  const fill = el("span", { class: "fill" });
  if (centre === null) {
    fill.style.left = "0";
    fill.style.width = `${clamped * 100}%`;
  } else {
    const from = Math.min(centre, clamped);
    fill.style.left = `${from * 100}%`;
    fill.style.width = `${Math.abs(clamped - centre) * 100}%`;
    if (clamped < centre) fill.classList.add("negative");
  }
  return el(
    "div",
    {
      class: "gauge",
      role: "meter",
      "aria-label": label,
      "aria-valuemin": "0",
      "aria-valuemax": "1",
      "aria-valuenow": String(value),
      "aria-valuetext": `${number(value)}${centre === null ? "" : ` (${centre} is neutral)`}`,
      "data-gauge": name,
      "data-value": String(value),
    },
    el("span", { class: "name" }, label),
    el("span", { class: "value" }, number(value)),
    el("div", { class: `track${centre === null ? "" : " centred"}`, "aria-hidden": "true" }, fill),
  );
}

export function replace(container, ...children) {
  container.replaceChildren(...children.flat().filter((c) => c !== null && c !== undefined));
}
