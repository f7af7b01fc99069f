// Imported first by the consumer tests: Pact's usage tracking off before @pact-foundation/pact
// loads (the Makefile exports it too), so that nothing leaves the machine.
process.env.PACT_DO_NOT_TRACK = "true";
