"""The CDK app that deploys Rapport: one stack composing one construct per concern."""
