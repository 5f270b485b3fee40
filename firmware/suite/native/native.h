/* The native build's appliance stand-in (native_appliance.c). */
#ifndef NATIVE_H
#define NATIVE_H

/* Forget earlier records; call before bench_run(). */
void native_start(void);
/* Write the record as text to path; 0 on success. */
int native_dump(const char *path);

#endif /* NATIVE_H */
