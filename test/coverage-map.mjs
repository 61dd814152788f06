// tap's coverage map: whatever a test file runs, coverage counts only the gateway's own code.
export default () => ['src/**/*.ts', 'mappings/**/*.ts'];
