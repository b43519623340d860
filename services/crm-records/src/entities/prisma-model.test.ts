// The one place the entities are held to schema.prisma. Each definition's columns come from the
// entity's contract (@crm/contracts) plus the defaults persistence adds; here they are compared, in
// order, with the Prisma model's scalar fields: type (a `@db.Uuid` String is a uuid column), enum
// values, optionality, `@default`; and the contract's relations with the model's relation fields.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CUSTOM_FIELDS_PROPERTY, recordEntities } from "@crm/contracts";
import { CASCADE_MARK_COLUMN } from "../persistence/trash-writes";
import { entityDefinitions, modelNameOf, type ColumnSpec } from "./index";

interface PrismaField {
  name: string;
  type: string;
  list: boolean;
  optional: boolean;
  attributes: string;
}

const schema = readFileSync(join(__dirname, "../../prisma/schema.prisma"), "utf8").replace(/\/\/.*$/gm, "");

function block(kind: "model" | "enum", name: string): string[] {
  const match = new RegExp(`^${kind} ${name} \\{\\n([\\s\\S]*?)^\\}`, "m").exec(schema);
  if (!match) throw new Error(`schema.prisma has no ${kind} ${name}`);
  return match[1]!
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("@@"));
}

function modelFields(model: string): PrismaField[] {
  return block("model", model).map((line) => {
    const [, name, type, list, optional, attributes] = /^(\w+)\s+(\w+)(\[\])?(\?)?\s*(.*)$/.exec(line)!;
    return { name: name!, type: type!, list: list === "[]", optional: optional === "?", attributes: attributes! };
  });
}

const scalarTypes: Record<string, ColumnSpec["type"]> = { String: "string", Boolean: "boolean", DateTime: "datetime", Decimal: "decimal", Int: "int" };
const enums = new Set([...schema.matchAll(/^enum (\w+) \{/gm)].map((match) => match[1]!));
const models = new Set([...schema.matchAll(/^model (\w+) \{/gm)].map((match) => match[1]!));

/** A Prisma scalar field as the definition's column would describe it. */
function columnOf(field: PrismaField): ColumnSpec {
  const uuid = field.type === "String" && field.attributes.includes("@db.Uuid");
  const literal = /@default\(("?)([^()"]*)\1\)/.exec(field.attributes);
  const value = literal?.[2];
  return {
    type: enums.has(field.type) ? "enum" : scalarTypes[field.type]!,
    nullable: field.optional,
    ...(uuid ? { uuid } : {}),
    ...(enums.has(field.type) ? { enumValues: block("enum", field.type) } : {}),
    // now() is a function the insert evaluates itself (record-insert.ts), not a stored default.
    ...(value !== undefined ? { default: value === "true" || value === "false" ? value === "true" : value } : {}),
  };
}

describe("entity definitions against schema.prisma", () => {
  it.each(recordEntities)("%s: columns, in order, are the model's scalar fields", (entity) => {
    const definition = entityDefinitions[entity];
    // customFields is every record's jsonb of custom values (extensions §E4), not a column of the contract.
    const all = modelFields(modelNameOf(entity)).filter((field) => !models.has(field.type) && field.name !== CUSTOM_FIELDS_PROPERTY);
    // The trash's mark of a cascaded delete is persistence's own column, on exactly the entities a delete cascades to.
    const cascadeTarget = recordEntities.some((owner) => entityDefinitions[owner].cascadeDelete?.some((dependent) => dependent.entity === entity));
    expect([entity, all.some((field) => field.name === CASCADE_MARK_COLUMN && field.optional && field.attributes.includes("@db.Uuid"))]).toEqual([entity, cascadeTarget]);
    const scalars = all.filter((field) => field.name !== CASCADE_MARK_COLUMN);
    const fromPrisma = Object.fromEntries(scalars.map((field) => [field.name, columnOf(field)]));
    expect(Object.keys(definition.columns)).toEqual(Object.keys(fromPrisma));
    expect(definition.columns).toEqual(fromPrisma);
    expect(definition.table).toBe(`"records"."${modelNameOf(entity)}"`);
  });

  it.each(recordEntities)("%s: every relation is a relation field of the model, of the right target and kind", (entity) => {
    const definition = entityDefinitions[entity];
    const relationFields = modelFields(modelNameOf(entity)).filter((field) => models.has(field.type));
    for (const [name, relation] of Object.entries(definition.relations)) {
      const field = relationFields.find((candidate) => candidate.name === name);
      expect({ name, type: field?.type, list: field?.list }).toEqual({ name, type: modelNameOf(relation.target), list: relation.kind === "many" });
    }
    // The only relation fields a definition does not name are a document's line items.
    const unnamed = relationFields.filter((field) => !Object.hasOwn(definition.relations, field.name)).map((field) => field.name);
    expect(unnamed).toEqual(definition.document ? [definition.document.itemsRelation] : []);
  });
});
