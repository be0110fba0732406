// The repo-scan example's app (manifest and instances), under the name the samples import it by.
export { app } from '../../examples/repo-scan/app.js';
