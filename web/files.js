// Readers for the page's inputs: .npy (NumPy's format, versions 1–3) and headerless numeric .csv.
// Both return { rows, cols, data: Float64Array, dtype, shape }; errors are thrown as Error with a
// message fit to show next to the file.

const NPY_MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY

/** Parses a .npy file (an ArrayBuffer). Any 1-D or 2-D array of float/int/uint/bool. */
export function parseNpy(buffer) {
  const bytes = new Uint8Array(buffer);
  if (bytes.length < 10 || !NPY_MAGIC.every((b, i) => bytes[i] === b)) {
    throw new Error('not a .npy file (the NumPy magic bytes are missing)');
  }
  const major = bytes[6];
  const view = new DataView(buffer);
  let headerLen, headerStart;
  if (major === 1) {
    headerLen = view.getUint16(8, true);
    headerStart = 10;
  } else if (major === 2 || major === 3) {
    headerLen = view.getUint32(8, true);
    headerStart = 12;
  } else {
    throw new Error(`unsupported .npy format version ${major}.${bytes[7]}`);
  }
  if (headerStart + headerLen > bytes.length) throw new Error('the .npy header is truncated');
  const header = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(headerStart, headerStart + headerLen));
  const descr = /'descr'\s*:\s*'([^']*)'/.exec(header);
  if (!descr) throw new Error('unsupported .npy dtype (structured arrays are not supported)');
  const fortran = /'fortran_order'\s*:\s*(True|False)/.exec(header);
  const shapeText = /'shape'\s*:\s*\(([^)]*)\)/.exec(header);
  if (!fortran || !shapeText) throw new Error('malformed .npy header');
  const shape = shapeText[1].split(',').map((s) => s.trim()).filter(Boolean).map(Number);
  if (shape.some((d) => !Number.isInteger(d) || d < 0)) throw new Error('malformed .npy shape');

  const m = /^([<>|=])([fiub])(\d+)$/.exec(descr[1]);
  if (!m) throw new Error(`unsupported .npy dtype '${descr[1]}' (use float64, float32 or integers)`);
  const [, order, kind, sizeText] = m;
  const size = Number(sizeText);
  const supported = { f: [4, 8], i: [1, 2, 4, 8], u: [1, 2, 4, 8], b: [1] };
  if (!supported[kind].includes(size)) throw new Error(`unsupported .npy dtype '${descr[1]}' (use float64, float32 or integers)`);
  const little = order !== '>';

  const count = shape.reduce((a, b) => a * b, 1);
  const offset = headerStart + headerLen;
  if (offset + count * size > bytes.length) {
    throw new Error(`the .npy data is truncated: shape (${shape.join(', ')}) needs ${count * size} bytes, the file has ${bytes.length - offset}`);
  }
  const raw = readElements(buffer, offset, count, kind, size, little);
  let data = raw;
  if (fortran[1] === 'True' && shape.length === 2) {
    const [r, c] = shape;
    data = new Float64Array(count);
    for (let i = 0; i < r; i++) for (let j = 0; j < c; j++) data[i * c + j] = raw[j * r + i];
  }
  return { shape, dtype: dtypeName(kind, size), data };
}

function dtypeName(kind, size) {
  return { f: 'float', i: 'int', u: 'uint', b: 'bool' }[kind] + (kind === 'b' ? '' : size * 8);
}

function readElements(buffer, offset, count, kind, size, little) {
  const out = new Float64Array(count);
  const fast = little && offset % size === 0;
  if (fast && kind === 'f' && size === 8) {
    out.set(new Float64Array(buffer, offset, count));
    return out;
  }
  if (fast && kind === 'f' && size === 4) {
    out.set(new Float32Array(buffer, offset, count));
    return out;
  }
  const view = new DataView(buffer, offset, count * size);
  const get = {
    f4: (p) => view.getFloat32(p, little), f8: (p) => view.getFloat64(p, little),
    i1: (p) => view.getInt8(p), i2: (p) => view.getInt16(p, little), i4: (p) => view.getInt32(p, little),
    i8: (p) => view.getBigInt64(p, little),
    u1: (p) => view.getUint8(p), b1: (p) => view.getUint8(p), u2: (p) => view.getUint16(p, little),
    u4: (p) => view.getUint32(p, little), u8: (p) => view.getBigUint64(p, little),
  }[kind + size];
  for (let i = 0; i < count; i++) {
    let v = get(i * size);
    if (typeof v === 'bigint') {
      if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < -BigInt(Number.MAX_SAFE_INTEGER)) {
        throw new Error(`value ${v} at element ${i} does not fit a double exactly`);
      }
      v = Number(v);
    }
    out[i] = v;
  }
  return out;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

/** A CSV field as Rust's f64 parser reads it (decimals, nan, inf, infinity). */
function parseField(field) {
  if (DECIMAL.test(field)) return parseFloat(field);
  const lower = field.toLowerCase().replace(/^[+]/, '');
  if (lower === 'nan' || lower === '-nan') return NaN;
  if (lower === 'inf' || lower === 'infinity') return Infinity;
  if (lower === '-inf' || lower === '-infinity') return -Infinity;
  return undefined;
}

const SEPARATORS = [',', ';', '\t', ' '];
const SEP_NAME = { ',': "','", ';': "';'", '\t': 'tab', ' ': 'space' };

/** The file's separator from its first data line, as the CLI's reader (src/data/csv.rs). */
function detectSeparator(line, lineNo) {
  const comma = line.includes(','), semicolon = line.includes(';');
  if (comma && semicolon) throw new Error(`line ${lineNo}: mixes ',' and ';' (a decimal comma? numbers need '.' as the decimal mark, and a file one separator)`);
  if (comma) return ',';
  if (semicolon) return ';';
  return line.includes('\t') ? '\t' : ' ';
}

/** A token from the file, quoted and cut, for a one-line message. */
function quoted(f) {
  const shown = [...f].slice(0, 40).join('').replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u{${c.charCodeAt(0).toString(16)}}`);
  return `'${shown}${[...f].length > 40 ? '…' : ''}'`;
}

/**
 * Parses a headerless numeric CSV with the CLI's rules: one separator per file (',' ';' tab,
 * or runs of spaces) taken from the first data line; blank and '#' lines skipped; a line that
 * mixes separators or has an empty field is an error naming the line.
 */
export function parseCsv(text) {
  const values = [];
  let cols = -1;
  let rows = 0;
  let sep = null;
  let first = 0;
  const lines = text.split(/\r?\n/);
  for (let l = 0; l < lines.length; l++) {
    const trimmed = lines[l].trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    if (sep === null) {
      sep = detectSeparator(trimmed, l + 1);
      first = l + 1;
    }
    // A tab file keeps its leading and trailing tabs: they delimit empty fields.
    const line = sep === '\t' ? lines[l].replace(/^[^\S\t]+|[^\S\t]+$/g, '') : trimmed;
    const fields = [];
    const parts = line.split(sep);
    for (let c = 0; c < parts.length; c++) {
      const f = sep === '\t' ? parts[c].replace(/^[^\S\t]+|[^\S\t]+$/g, '') : parts[c].trim();
      if (!f) {
        if (sep === ' ') continue;
        throw new Error(`line ${l + 1}: empty field in column ${c + 1} (fields are separated by ${SEP_NAME[sep]})`);
      }
      const other = [...f].find((ch) => SEPARATORS.includes(ch));
      if (other) throw new Error(`line ${l + 1}: mixes separators: ${SEP_NAME[sep]} and ${SEP_NAME[other]} (one separator per file, taken from the first data line, line ${first})`);
      fields.push(f);
    }
    for (const f of fields) {
      const v = parseField(f);
      if (v === undefined) {
        const hint = rows === 0 ? 'a header row? ' : '';
        throw new Error(`line ${l + 1}: ${quoted(f)} is not a number (${hint}the file must be headerless and numeric)`);
      }
      values.push(v);
    }
    if (cols < 0) cols = fields.length;
    else if (fields.length !== cols) throw new Error(`line ${l + 1}: has ${fields.length} values, earlier rows have ${cols}`);
    rows++;
  }
  if (rows === 0) throw new Error('the file has no rows');
  return { shape: [rows, cols], dtype: 'csv', data: Float64Array.from(values) };
}

/** Reads a File as a matrix ('points') or a label vector ('labels'). */
export async function readFile(file, role) {
  const name = file.name;
  const ext = name.toLowerCase().split('.').pop();
  let parsed;
  if (ext === 'npy') parsed = parseNpy(await file.arrayBuffer());
  else if (ext === 'csv' || ext === 'txt' || ext === 'tsv') parsed = parseCsv(await file.text());
  else throw new Error(`${name}: unsupported file type '.${ext}' (use .npy or headerless .csv)`);
  try {
    return role === 'labels' ? asLabels(name, parsed) : asPoints(name, parsed);
  } catch (e) {
    throw new Error(`${name}: ${e.message}`);
  }
}

function asPoints(name, { shape, dtype, data }) {
  if (shape.length !== 2) {
    throw new Error(`expected a 2-D array (rows × columns), got shape (${shape.join(', ')}${shape.length === 1 ? ',' : ''})`);
  }
  return { name, rows: shape[0], cols: shape[1], dtype, data };
}

function asLabels(name, { shape, dtype, data }) {
  if (!(shape.length === 1 || (shape.length === 2 && shape[1] === 1))) {
    throw new Error(`labels must be one value per point (shape (n,) or (n, 1)), got shape (${shape.join(', ')})`);
  }
  for (let i = 0; i < data.length; i++) {
    if (!Number.isInteger(data[i])) throw new Error(`label ${data[i]} at row ${i + 1} is not an integer`);
  }
  return { name, rows: shape[0], dtype, data };
}

