// Imports the client and test-kit entries, as an app's tests do, and prints which packages the
// process loaded.
import 'mcp-task-server/client';
import 'mcp-task-server/testing';
import { loadedPackages } from './loaded-packages.mjs';

process.stdout.write(`loaded: ${JSON.stringify(loadedPackages())}\n`);
process.exit(0);
