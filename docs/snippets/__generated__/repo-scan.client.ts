// The typed client mcp-taskgen writes for the repo-scan example, under the name the samples import it by.
export * from '../../../test/client/typed-fixture/src/__generated__/repo-scan.client.js';
