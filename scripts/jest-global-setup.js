// Runs once before all tests. Starts nothing by itself: suites that need a real etcd call
// the helper in packages/apiserver/src/storage/testing, which installs and starts it on demand.
module.exports = async function globalSetup() {};
