"""The asset groups, named once: the assets that belong to a group and the jobs, schedule and sensors that select
it both import the name from here, so an asset module never imports the jobs that select it."""

SCOPES_GROUP = "scopes"  # every per-scope asset (corpus, pages, priors)
AUDIT_GROUP = "audit"  # the cross-scope audit tables, the report and its notification
VERDICTS_GROUP = "verdicts"  # the judge's verdicts per scope, their report and notification
WORKLIST_GROUP = "worklist"  # the cost-bounded sample of claims for the judge
