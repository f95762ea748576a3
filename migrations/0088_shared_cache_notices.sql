-- Two more per-process copies behind the profile cache's notices (docs/decisions/2026-12-06-turn-round-trips.md):
-- the person key an identity is stored under (read for every inbound message) and whether any money
-- budget row is on (read before every model call and after every turn). Both live in the cache's
-- values about every profile (ProfileCache.shared), which every notice drops; these statement-level
-- triggers send that notice ('', every profile) when a write that could change them commits. The
-- tables change when a person links an identity or an operator sets a budget: rarely.
CREATE TRIGGER person_identities_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON person_identities
  FOR EACH STATEMENT EXECUTE FUNCTION herald_profile_changed('identity');
CREATE TRIGGER people_key_changed AFTER UPDATE OF key OR DELETE OR TRUNCATE ON people
  FOR EACH STATEMENT EXECUTE FUNCTION herald_profile_changed('id');
CREATE TRIGGER budgets_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON budgets
  FOR EACH STATEMENT EXECUTE FUNCTION herald_profile_changed('subject');
