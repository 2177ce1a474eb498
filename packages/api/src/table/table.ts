/**
 * The Table view of objects (`Accept: application/json;as=Table;g=meta.platform;v=v1beta1`), with columns per kind
 * as Kubernetes' printers define them. A kind without columns gets the default table: `Name` and `Created At`.
 */
import { type ObjectMeta, type Table, type TableColumnDefinition, type TableRow } from '../meta/v1/types';

/** One column of a kind's table: its definition and how to compute its cell from an object. */
export interface TableColumn<T> {
  name: string;
  /** OpenAPI type of the cells: `string`, `integer`, `number`, `boolean`, `date`. */
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description?: string;
  /** 0 = shown by default; higher = shown only in wide output. */
  priority?: number;
  /** The cell of an object; `now` is injected so ages are testable. */
  cell(obj: T, now: number): unknown;
}

interface WithMeta {
  metadata?: ObjectMeta;
}

const NAME_COLUMN: TableColumn<WithMeta> = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Cannot be updated.',
  cell: (o) => o.metadata?.name ?? '',
};

const CREATED_AT_COLUMN: TableColumn<WithMeta> = {
  name: 'Created At',
  type: 'date',
  description: 'Time this object was created. Set by the server.',
  cell: (o) => o.metadata?.creationTimestamp ?? null,
};

/** The `Age` column most kinds print last. */
export const AGE_COLUMN: TableColumn<WithMeta> = {
  name: 'Age',
  type: 'string',
  description: 'Time since the object was created.',
  cell: (o, now) => age(o.metadata?.creationTimestamp, now),
};

/** The columns of a kind: `Name` then its own, or the default `Name` + `Created At`. */
export function tableColumns<T>(columns: TableColumn<T>[] | undefined): TableColumn<T>[] {
  const name = NAME_COLUMN as unknown as TableColumn<T>;
  return columns ? [name, ...columns] : [name, CREATED_AT_COLUMN as unknown as TableColumn<T>];
}

function definition<T>(c: TableColumn<T>): TableColumnDefinition {
  return {
    name: c.name,
    type: c.type,
    format: c.format ?? '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
  };
}

/** Options of {@link toTable}. */
export interface TableOptions {
  /** `includeObject`: `None`, `Object` (the whole object) or `Metadata` (the default, as in Kubernetes). */
  includeObject?: 'None' | 'Object' | 'Metadata';
  /** The current time in milliseconds, for ages. */
  now: number;
  /** `metadata.resourceVersion` and `continue` of the list, when the table is of a list. */
  listMeta?: Table['metadata'];
  /** Leave out the column definitions (`noHeaders`, used for later pages of a watch). */
  noHeaders?: boolean;
}

/** Builds the Table of some objects with a kind's columns. */
export function toTable<T extends WithMeta>(columns: TableColumn<T>[], objects: T[], o: TableOptions): Table {
  const rows: TableRow[] = objects.map((obj) => {
    const row: TableRow = { cells: columns.map((c) => c.cell(obj, o.now)) };
    const include = o.includeObject ?? 'Metadata';
    if (include === 'Object') row.object = obj as Record<string, unknown>;
    else if (include === 'Metadata') {
      row.object = { kind: 'PartialObjectMetadata', apiVersion: 'meta.platform/v1', metadata: obj.metadata ?? {} };
    }
    return row;
  });
  return {
    kind: 'Table',
    apiVersion: 'meta.platform/v1beta1',
    metadata: o.listMeta ?? {},
    columnDefinitions: o.noHeaders ? [] : columns.map(definition),
    rows,
  };
}

/** The age of an object as Kubernetes prints it (`<unknown>` without a creation time). */
export function age(creationTimestamp: string | undefined, now: number): string {
  if (!creationTimestamp) return '<unknown>';
  const then = Date.parse(creationTimestamp);
  if (Number.isNaN(then)) return '<unknown>';
  return humanDuration(now - then);
}

/** A duration in milliseconds in Kubernetes' short human form (`duration.HumanDuration`): `45s`, `5m3s`, `3h`, `2d5h`, `3y`. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 60 * 2) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 60 * 3) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.trunc(hours / 24)}d` : `${Math.trunc(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.trunc(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.trunc(hours / 24) % 365;
    const y = Math.trunc(hours / 24 / 365);
    return dy === 0 ? `${y}y` : `${y}y${dy}d`;
  }
  return `${Math.trunc(hours / 24 / 365)}y`;
}
