// Package jobwire holds the wire types that massd's server, its client
// (massctl) and the job kinds share: each kind's name and the JSON
// parameters it is submitted with. It is a leaf, so massctl can build a
// job's params without linking the kind or a store.
package jobwire
