"""Scheduled jobs: the governance jobs per end user, their fan-out over tenants and users, and their lease."""
