// `node --import ./record-modules.mjs`: records the URL of every ES module (and of every
// CommonJS module an ES module imports) into the file named by MODULE_LOG, before it loads.
import { register } from 'node:module';

register('./record-hooks.mjs', import.meta.url, { data: { log: process.env.MODULE_LOG } });
