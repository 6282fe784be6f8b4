"""One construct per concern of the Rapport stack (table, core layer, functions, API; more to come)."""
