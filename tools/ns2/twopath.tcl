# ns-2.35 (SCTP CMT) two-path, loss-free cross-check of cmtlab.
# Usage: ns twopath.tcl RATE1 DELAY1_MS RATE2 DELAY2_MS RBUF QUEUE DURATION [LOSS [SEED [DAC [SFR]]]]
# LOSS: Bernoulli loss per packet on both paths, both directions (default 0).
# One link per path (one-way delay DELAY*_MS), round-robin CMT with SFR/CUC/DAC.
Trace set show_sctphdr_ 1
set ns [new Simulator]
set tr [open trace.tr w]
$ns trace-all $tr
lassign $argv r1 d1 r2 d2 rbuf queue duration loss seed dac sfr
if {$loss == ""} { set loss 0 }
if {$seed == ""} { set seed 1 }
if {$dac == ""} { set dac 1 }
if {$sfr == ""} { set sfr 1 }
global defaultRNG
$defaultRNG seed $seed
set s [$ns node]
set r [$ns node]
set i 0
foreach {rate d} [list $r1 $d1 $r2 $d2] {
    set si($i) [$ns node]
    set ri($i) [$ns node]
    $ns multihome-add-interface $s $si($i)
    $ns multihome-add-interface $r $ri($i)
    $ns duplex-link $si($i) $ri($i) $rate ${d}ms DropTail
    $ns queue-limit $si($i) $ri($i) $queue
    $ns queue-limit $ri($i) $si($i) $queue
    if {$loss > 0} {
        foreach {x y} [list $si($i) $ri($i) $ri($i) $si($i)] {
            set em [new ErrorModel]
            $em unit pkt
            $em set rate_ $loss
            $em ranvar [new RandomVariable/Uniform]
            $em drop-target [new Agent/Null]
            $ns lossmodel $em $x $y
        }
    }
    incr i
}
set snd [new Agent/SCTP/CMT]
$ns multihome-attach-agent $s $snd
$snd set mtu_ 1500
$snd set dataChunkSize_ 1468
$snd set numOutStreams_ 1
$snd set initialRwnd_ $rbuf
$snd set useCmtPF_ 0
$snd set initialCwnd_ 3
$snd set useCmtDelAck_ $dac
$snd set useCmtReordering_ $sfr
set rcv [new Agent/SCTP/CMT]
$ns multihome-attach-agent $r $rcv
$rcv set initialRwnd_ $rbuf
$rcv set useCmtDelAck_ $dac
$ns connect $snd $rcv
$snd set-primary-destination $ri(0)
set ftp [new Application/FTP]
$ftp attach-agent $snd
$ns at 0.0 "$ftp start"
$ns at $duration "finish"
proc finish {} {
    global ns tr
    $ns flush-trace
    close $tr
    exit 0
}
$ns run
