// #region typed
import { createClient } from './__generated__/repo-scan.client.js';

const c = createClient('http://127.0.0.1:3000/mcp');
const t = await c.scanRepository({ path: '.', top: 3 }); // arguments type-checked
const report = await t.result(); // ScanReport, checked by its schema
const clean = await c.cleanBuildOutputs({ path: '.' });
await clean.answer('approval', { confirm: true }); // the @NeedsInput answer type
// #endregion typed
console.log(report.files);
