"""Provider validity for the test suite: real payload builders, documented rules, history strategies."""
