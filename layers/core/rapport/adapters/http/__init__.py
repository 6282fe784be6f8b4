"""Adapters that talk to receivers on the web: a tenant's webhook endpoints, and the DNS that names them."""
