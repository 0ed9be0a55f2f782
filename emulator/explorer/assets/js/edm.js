// EDM types: the entity model the explorer works on, validation as the
// server validates (emulator/wire/validate.go, emulator/wire/decode.go,
// odata/edm), and the wire JSON. Every value is kept as its canonical text,
// so nothing is lost to JavaScript numbers: Int64 beyond 2^53, a Double's
// exact digits, DateTime's seven fractional digits.

import { Num } from './json.js';
import { base64ToBytes } from './crypto.js';

export const TYPES = ['Edm.String', 'Edm.Int32', 'Edm.Int64', 'Edm.Double', 'Edm.Boolean', 'Edm.DateTime', 'Edm.Guid', 'Edm.Binary'];

// Limits of the service, as the server enforces them (wire/validate.go).
export const LIMITS = {
  key: 1024, // UTF-16 code units
  propertyName: 255,
  properties: 252,
  string: 32 * 1024, // UTF-16 code units
  binary: 64 * 1024, // bytes
  entity: 1024 * 1024 - 88, // the documented estimator, as measured live
};

export const shortType = (t) => t.replace(/^Edm\./, '');

// An entity: keys, Timestamp and ETag as the server sent them, and the
// user properties in order, each {name, type, value} with value as text.
export function entityFromWire(obj) {
  const e = { PartitionKey: '', RowKey: '', Timestamp: '', etag: obj['odata.etag'] || '', props: [] };
  for (const [k, v] of Object.entries(obj)) {
    if (k.startsWith('odata.') || k.includes('@')) continue;
    if (k === 'PartitionKey' || k === 'RowKey' || k === 'Timestamp') {
      e[k] = String(v);
      continue;
    }
    const ann = obj[k + '@odata.type'];
    e.props.push({ name: k, ...typedFromWire(v, ann) });
  }
  return e;
}

function typedFromWire(v, ann) {
  if (ann) {
    if (v instanceof Num) return { type: ann, value: ann === 'Edm.Double' ? v.raw : v.raw };
    if (typeof v === 'boolean') return { type: ann, value: String(v) };
    return { type: ann, value: v === null ? '' : String(v) };
  }
  if (typeof v === 'string') return { type: 'Edm.String', value: v };
  if (typeof v === 'boolean') return { type: 'Edm.Boolean', value: String(v) };
  if (v instanceof Num) {
    // As the server infers (wire.inferredValue): an integer within Int32
    // is an Int32, any other number a Double.
    if (/^-?\d+$/.test(v.raw) && inInt32(v.raw)) return { type: 'Edm.Int32', value: v.raw };
    return { type: 'Edm.Double', value: v.raw };
  }
  return { type: 'Edm.String', value: v === null ? '' : String(v) };
}

function inInt32(text) {
  const n = BigInt(text);
  return n >= -2147483648n && n <= 2147483647n;
}

// checkValue validates text as a value of type and returns
// {value: canonical text} or {error: message}.
export function checkValue(type, text) {
  switch (type) {
    case 'Edm.String':
      if (text.length > LIMITS.string) return { error: `longer than ${LIMITS.string} UTF-16 code units (64 KiB)` };
      return { value: text };
    case 'Edm.Int32':
    case 'Edm.Int64': {
      if (!/^[+-]?\d+$/.test(text)) return { error: 'not an integer' };
      const n = BigInt(text);
      const [lo, hi] = type === 'Edm.Int32' ? [-(2n ** 31n), 2n ** 31n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
      if (n < lo || n > hi) return { error: `outside the ${shortType(type)} range ${lo} to ${hi}` };
      return { value: n.toString() };
    }
    case 'Edm.Double': {
      const special = { NaN: 'NaN', Infinity: 'Infinity', '+Infinity': 'Infinity', INF: 'Infinity', '-Infinity': '-Infinity', '-INF': '-Infinity' }[text];
      if (special) return { value: special };
      if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) return { error: 'not a number (NaN, Infinity and -Infinity are allowed)' };
      const f = Number(text);
      if (!Number.isFinite(f)) return { error: 'outside the range of a Double' };
      // The shortest text that round-trips, as the server writes it.
      return { value: /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(text) ? text : String(f) };
    }
    case 'Edm.Boolean':
      if (/^true$/i.test(text)) return { value: 'true' };
      if (/^false$/i.test(text)) return { value: 'false' };
      return { error: 'true or false' };
    case 'Edm.DateTime':
      return checkDateTime(text);
    case 'Edm.Guid':
      if (!/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/.test(text)) {
        return { error: 'not a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)' };
      }
      return { value: text.toLowerCase() };
    case 'Edm.Binary': {
      const b = base64ToBytes(text);
      if (b === null) return { error: 'not standard base64 (A–Z a–z 0–9 + / with = padding)' };
      if (b.length > LIMITS.binary) return { error: `${b.length} bytes; the limit is ${LIMITS.binary}` };
      return { value: text };
    }
  }
  return { error: `unknown type ${type}` };
}

// checkDateTime mirrors edm.ParseDateTime: yyyy-mm-dd, optionally
// Thh:mm[:ss[.fffffff]] and then Z, ±hh:mm or nothing (UTC); the instant
// within 1601-01-01 to 9999-12-31.
function checkDateTime(text) {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))?)?$/.exec(text);
  const bad = { error: 'not an ISO 8601 date and time, e.g. 2024-05-01T12:00:00Z' };
  if (!m) return bad;
  const [, y, mo, d, hh = '0', mi = '0', ss = '0', frac = '', , sign, oh = '0', om = '0'] = m;
  if (+mo < 1 || +mo > 12 || +d < 1 || +hh > 23 || +mi > 59 || +ss > 59 || +oh > 23 || +om > 59) return bad;
  const t = new Date(0);
  t.setUTCFullYear(+y, +mo - 1, +d);
  t.setUTCHours(+hh, +mi, +ss, 0);
  if (t.getUTCDate() !== +d) return bad;
  const offset = sign ? (sign === '-' ? -1 : 1) * (+oh * 60 + +om) : 0;
  t.setTime(t.getTime() - offset * 60000);
  if (t.getUTCFullYear() < 1601 || t.getUTCFullYear() > 9999) return { error: 'outside 1601-01-01 to 9999-12-31' };
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  // Seven fractional digits at most, trailing zeros trimmed, as the
  // server writes DateTime values (edm.AppendDateTime).
  const f = frac.slice(0, 7).replace(/0+$/, '');
  return {
    value: `${pad(t.getUTCFullYear(), 4)}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}${f ? '.' + f : ''}Z`,
  };
}

// checkKey validates a PartitionKey or RowKey as wire.ValidateKey does.
export function checkKey(name, value) {
  if (/[/\\#?\u0000-\u001f\u007f-\u009f]/.test(value)) {
    return `${name} may not contain / \\ # ? or control characters`;
  }
  if (value.length > LIMITS.key) return `${name} is ${value.length} UTF-16 code units; the limit is ${LIMITS.key}`;
  return '';
}

const IDENT_START = /^[\p{L}\p{Nl}_]$/u;
const IDENT_PART = /^[\p{L}\p{Nl}\p{Nd}\p{Pc}\p{Mn}\p{Mc}\p{Cf}_]$/u;

// checkPropertyName validates a user property name as
// wire.ValidatePropertyName does: a C# identifier of at most 255
// characters, not one of the system properties.
export function checkPropertyName(name) {
  if (name === '') return 'a name is required';
  const chars = Array.from(name);
  if (!IDENT_START.test(chars[0]) || !chars.slice(1).every((c) => IDENT_PART.test(c))) {
    return 'names start with a letter or _ and continue with letters, digits or _';
  }
  if (name.length > LIMITS.propertyName) return `longer than ${LIMITS.propertyName} characters`;
  if (name === 'PartitionKey' || name === 'RowKey' || name === 'Timestamp') return `${name} is a system property`;
  return '';
}

// entitySize is the service's size estimate (wire.EntitySize).
export function entitySize(e) {
  let size = 4 + 2 * (e.PartitionKey.length + e.RowKey.length);
  for (const p of e.props) {
    size += 8 + 2 * p.name.length;
    switch (p.type) {
      case 'Edm.String': size += 4 + 2 * p.value.length; break;
      case 'Edm.Binary': size += 4 + (base64ToBytes(p.value)?.length ?? 0); break;
      case 'Edm.DateTime': case 'Edm.Double': case 'Edm.Int64': size += 8; break;
      case 'Edm.Guid': size += 16; break;
      case 'Edm.Int32': size += 4; break;
      case 'Edm.Boolean': size += 1; break;
    }
  }
  return size;
}

// checkEntity validates a whole entity; it returns a list of
// {field, message}: field is 'PartitionKey', 'RowKey', a property index, or
// '' for the entity as a whole. Values are canonicalised in place.
export function checkEntity(e) {
  const errs = [];
  for (const k of ['PartitionKey', 'RowKey']) {
    const m = checkKey(k, e[k]);
    if (m) errs.push({ field: k, message: m });
  }
  if (e.props.length > LIMITS.properties) errs.push({ field: '', message: `${e.props.length} properties; the limit is ${LIMITS.properties}` });
  const seen = new Set();
  e.props.forEach((p, i) => {
    let m = checkPropertyName(p.name);
    if (!m && seen.has(p.name)) m = `${p.name} appears twice`;
    seen.add(p.name);
    if (m) errs.push({ field: i, part: 'name', message: m });
    const v = checkValue(p.type, p.value);
    if (v.error) errs.push({ field: i, part: 'value', message: `${shortType(p.type)}: ${v.error}` });
    else p.value = v.value;
  });
  if (!errs.length) {
    const size = entitySize(e);
    if (size > LIMITS.entity) errs.push({ field: '', message: `the entity is ${size} bytes by the service's estimate; the limit is ${LIMITS.entity}` });
  }
  return errs;
}

// entityJSON writes e as the Table API's JSON: every property that is not
// a String carries its @odata.type, so the server stores exactly the type
// shown (the server accepts the annotation on every type, wire.typedValue).
// It is also one line of an export file.
export function entityJSON(e) {
  const parts = [`"PartitionKey":${JSON.stringify(e.PartitionKey)}`, `"RowKey":${JSON.stringify(e.RowKey)}`];
  for (const p of e.props) {
    const name = JSON.stringify(p.name);
    if (p.type !== 'Edm.String') parts.push(`${JSON.stringify(p.name + '@odata.type')}:${JSON.stringify(p.type)}`);
    parts.push(`${name}:${wireValue(p)}`);
  }
  return `{${parts.join(',')}}`;
}

function wireValue(p) {
  switch (p.type) {
    case 'Edm.Int32':
    case 'Edm.Boolean':
      return p.value;
    case 'Edm.Double':
      return /^(NaN|-?Infinity)$/.test(p.value) ? JSON.stringify(p.value) : p.value;
    default:
      return JSON.stringify(p.value);
  }
}
