"""Chat-platform ingestion: signed Slack and webhook requests in, `Interaction Received` events on the bus out."""
