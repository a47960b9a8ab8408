/** A small element builder: h("div.card", { onclick }, child, "text"). */
type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, unknown>;

export function h<K extends keyof HTMLElementTagNameMap>(spec: K | `${K}.${string}` | `${K}#${string}`, attrs?: Attrs | Child, ...children: Child[]): HTMLElementTagNameMap[K] {
  const tag = /^[a-z0-9]+/i.exec(spec)![0];
  const el = document.createElement(tag as K);
  const id = /#([\w-]+)/.exec(spec)?.[1];
  if (id) el.id = id;
  const classes = [...spec.matchAll(/\.([\w-]+)/g)].map((m) => m[1]!);
  if (classes.length) el.className = classes.join(" ");
  if (attrs && (typeof attrs !== "object" || attrs instanceof Node || Array.isArray(attrs))) {
    children.unshift(attrs as Child);
  } else if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v as EventListener);
      else if (k === "class") el.className += (el.className ? " " : "") + String(v);
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k in el && k !== "list") (el as unknown as Record<string, unknown>)[k] = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, children);
}

/**
 * Makes `nodes` the children of `el`, touching the DOM only when they differ: moving a node that
 * is already in place would take the focus, and a half-typed name, from an input in it.
 */
export function keepChildren(el: Element, nodes: readonly Element[]): void {
  if (nodes.length !== el.children.length || nodes.some((n, i) => el.children[i] !== n)) replace(el, [...nodes]);
}

export { pct } from "./format.js";

export function ago(iso: string): string {
  const s = Math.round((Date.now() - new Date(iso).getTime()) / 1000);
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.round(s / 60)}m ago`;
  if (s < 86400) return `${Math.round(s / 3600)}h ago`;
  return new Date(iso).toLocaleDateString();
}

/** The person's display name (the header's field, kept in localStorage). */
export function myName(): string {
  const input = document.getElementById("name") as HTMLInputElement | null;
  const name = input?.value.trim() || localStorage.getItem("sw-name") || "";
  return name.slice(0, 40);
}

export function initName(): void {
  const input = document.getElementById("name") as HTMLInputElement | null;
  if (!input) return;
  input.value = localStorage.getItem("sw-name") ?? "";
  input.placeholder = "anonymous";
  input.addEventListener("change", () => localStorage.setItem("sw-name", input.value.trim()));
}
