"""Adapters for AWS services other than DynamoDB and OpenSearch: EventBridge, SQS, Secrets Manager, Step Functions."""
