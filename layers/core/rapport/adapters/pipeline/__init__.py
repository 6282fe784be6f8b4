"""Adapters of the `PipelineTrigger` port: Step Functions in AWS, the steps in process locally."""
