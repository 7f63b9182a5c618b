// json_format: runs inside an isolate, so no imports; pure computation.
export default async function jsonFormat(args) {
  let value;
  try {
    value = JSON.parse(args.json);
  } catch (error) {
    throw new Error(`json is not valid JSON: ${error.message}`);
  }
  const indent = args.indent ?? 2;
  const formatted = JSON.stringify(args.sortKeys ? sortKeys(value) : value, null, indent);
  return { formatted };
}

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  // A null prototype keeps a "__proto__" key an ordinary key instead of a prototype change.
  const sorted = Object.create(null);
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key]);
  return sorted;
}
