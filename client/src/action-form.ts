/**
 * A form for one action, built from the action's JSON Schema (derived from the world's zod schema):
 * a choice of variant for a union (`oneOf` of objects told apart by a `const` field), then one
 * input per field (a select for an enum, a text, number or checkbox input otherwise; a group of
 * fields for an object field). When the
 * world lists every valid action, they are offered as buttons too.
 */
import { h } from "./dom.js";

interface JsonSchema {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  description?: string;
  minimum?: number;
  maximum?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  oneOf?: JsonSchema[];
  anyOf?: JsonSchema[];
}

export interface ActionForm {
  readonly element: HTMLElement;
}

function variants(schema: JsonSchema): JsonSchema[] {
  return schema.oneOf ?? schema.anyOf ?? [schema];
}

/** The field whose `const` tells the variants apart ("type"). */
function discriminator(vs: JsonSchema[]): string | undefined {
  const first = vs[0]?.properties ?? {};
  return Object.keys(first).find((k) => vs.every((v) => v.properties?.[k]?.const !== undefined));
}

function label(value: unknown): string {
  if (value && typeof value === "object") {
    const vals = Object.values(value as Record<string, unknown>).map((v) => String(v));
    return vals.join(" ");
  }
  return String(value);
}

/**
 * One field's input and how to read it. An object with properties (usersim's `states`: one text
 * per latent state) is a group of fields, read as an object.
 */
function field(key: string, name: string, prop: JsonSchema, required: boolean): { element: HTMLElement; read: () => unknown } {
  const caption = h("span", key, required ? "" : " (optional)");
  if (prop.properties && (prop.type === "object" || prop.type === undefined)) {
    const parts = Object.entries(prop.properties).map(([k, p]) => ({ k, ...field(k, `${name}.${k}`, p, prop.required?.includes(k) ?? false) }));
    const read = () => {
      const out: Record<string, unknown> = {};
      for (const part of parts) {
        const value = part.read();
        if (value !== undefined) out[part.k] = value;
      }
      return out;
    };
    return { element: h("fieldset.field-group", { "data-field": name }, h("legend", caption), parts.map((p) => p.element)), read };
  }
  let read: () => unknown;
  let control: HTMLElement;
  if (prop.enum) {
    const sel = h("select", { name }, required ? null : h("option", { value: "" }, "(none)"), prop.enum.map((e) => h("option", { value: String(e) }, String(e))));
    read = () => (sel.value === "" ? undefined : prop.enum!.find((e) => String(e) === sel.value));
    control = sel;
  } else if (prop.type === "number" || prop.type === "integer") {
    // A number input steps by 1 unless told otherwise, and the browser then refuses to send 0.6
    // (the economy's propensities): any number within the schema's bounds is valid.
    const bounds = { ...(prop.minimum !== undefined ? { min: String(prop.minimum) } : {}), ...(prop.maximum !== undefined ? { max: String(prop.maximum) } : {}) };
    const inp = h("input", { name, type: "number", step: prop.type === "integer" ? "1" : "any", ...bounds });
    read = () => (inp.value === "" ? undefined : Number(inp.value));
    control = inp;
  } else if (prop.type === "boolean") {
    const inp = h("input", { name, type: "checkbox" });
    read = () => inp.checked;
    control = inp;
  } else {
    const inp = h("textarea", { name, rows: 2, placeholder: prop.description ?? key });
    read = () => inp.value;
    control = inp;
  }
  return { element: h("label.field", caption, control), read };
}

export function actionForm(schema: unknown, options: readonly unknown[] | undefined, submit: (action: unknown) => void): ActionForm {
  const root = schema as JsonSchema;
  const vs = variants(root);
  const disc = vs.length > 1 ? discriminator(vs) : undefined;
  const fieldsBox = h("div.fields");
  const kind = h("select", { name: "variant", "aria-label": "action" });
  vs.forEach((v, i) => {
    const name = disc ? String(v.properties![disc]!.const) : "action";
    kind.append(h("option", { value: String(i) }, v.description ? `${name}: ${v.description}` : name));
  });
  let inputs: { key: string; read: () => unknown }[] = [];

  const draw = () => {
    const v = vs[Number(kind.value)] ?? vs[0]!;
    inputs = [];
    fieldsBox.replaceChildren();
    for (const [key, prop] of Object.entries(v.properties ?? {})) {
      if (key === disc || prop.const !== undefined) {
        inputs.push({ key, read: () => prop.const });
        continue;
      }
      const f = field(key, key, prop, v.required?.includes(key) ?? false);
      inputs.push({ key, read: f.read });
      fieldsBox.append(f.element);
    }
  };
  kind.addEventListener("change", draw);
  draw();

  const send = h("button.primary", { type: "submit" }, "Act");
  const form = h(
    "form.action-form",
    {
      onsubmit: (e: Event) => {
        e.preventDefault();
        const action: Record<string, unknown> = {};
        for (const { key, read } of inputs) {
          const value = read();
          if (value !== undefined) action[key] = value;
        }
        submit(action);
      },
    },
    vs.length > 1 ? h("label.field", h("span", "action"), kind) : null,
    fieldsBox,
    send,
  );
  const quick =
    options && options.length > 0 && options.length <= 40
      ? h(
          "div.options",
          h("span.muted.small", "choose:"),
          options.map((o) => h("button.option", { type: "button", onclick: () => submit(o) }, label(o))),
        )
      : null;
  return { element: h("div.action", quick, form) };
}
