/**
 * JSON Schema (2020-12) for every shape of the contract, generated from the zod
 * models that the build, the server and the tests already use: one source.
 */
import { z } from "zod";
import { SHAPES, type Shape } from "../model/shapes.js";

/** The JSON Schema of one shape, standalone. */
export function jsonSchemaOf(name: string): Record<string, unknown> {
  const shape: Shape | undefined = SHAPES[name as keyof typeof SHAPES];
  if (!shape) throw new Error(`no shape named ${name}`);
  const generated = z.toJSONSchema(shape.schema, { target: "draft-2020-12", io: shape.io, unrepresentable: "any" });
  return { ...generated, $id: `urn:cdsnap:schemas:${name}`, title: name, description: shape.description };
}

/** The shapes as OpenAPI components, referring to each other by $ref. */
export function componentSchemas(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const io of ["output", "input"] as const) {
    const registry = z.registry<{ id: string; description: string }>();
    for (const [id, shape] of Object.entries(SHAPES) as [string, Shape][]) {
      if (shape.io === io && !shape.source) registry.add(shape.schema, { id, description: shape.description });
    }
    const { schemas } = z.toJSONSchema(registry, {
      target: "draft-2020-12",
      io,
      unrepresentable: "any",
      uri: (id) => `#/components/schemas/${id}`,
    });
    for (const [id, schema] of Object.entries(schemas)) {
      const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
      out[id] = rest;
    }
  }
  return out;
}
