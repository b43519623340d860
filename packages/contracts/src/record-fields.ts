// The vocabulary of a record's scalar fields, typed for the `where` language. Each entity's fields
// are declared in record-responses.ts and named by its contract in records.ts (`recordContracts[entity].fields`).

export type RecordFieldType = "string" | "decimal" | "boolean" | "datetime" | "enum" | "uuid";

export interface RecordField {
  type: RecordFieldType;
  nullable: boolean;
  enumValues?: readonly string[];
}

export const recordField = (type: Exclude<RecordFieldType, "enum">, nullable = false): RecordField => ({ type, nullable });
export const enumField = (enumValues: readonly string[]): RecordField => ({ type: "enum", nullable: false, enumValues });
