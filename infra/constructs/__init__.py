"""One construct per concern of the Rapport stack (the list and what each deploys: docs/deploy.md)."""
